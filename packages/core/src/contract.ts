// The platform's facts live in @platform/contract (dependency-free, also loaded by browsers); core's
// modules and its importers reach them here as before.
export * from '@platform/contract';
