export { isLocalhostName, isPublicAddress, parseHost, type ParsedHost } from './addresses';
export {
  createAddressGuard,
  hostOfUrl,
  NonPublicAddressError,
  NOT_PUBLIC_MESSAGE,
  pinnedLookup,
  systemResolver,
  UnresolvedHostError,
  type AddressGuard,
  type AddressGuardOptions,
  type CheckedAddress,
  type Resolver,
} from './guard';
