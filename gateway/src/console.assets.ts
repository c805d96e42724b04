import { BUCKET_LIMITS, DEFAULT_VERSION, EVENT_TYPES, ROUTES, SCOPES, SERVICES, type BucketName, type ServiceName } from '@platform/core';
import { MAX_KEY_RATE_LIMIT } from '@platform/admin-api';
import { builtPageDir, CONTENT_TYPES, loadPageAssets, pageAsset, type PageAssets } from './page-assets';

/** The URL path the workspace console is served under. */
export const CONSOLE_PATH = '/console';

/** URL path (`/console/main.js`) → asset; `/console` and `/console/` are the page. */
export type ConsoleAssets = PageAssets;

/** The built console (@platform/console's dist/console), undefined when it was not built. */
export function defaultConsoleDir(): string | undefined {
  return builtPageDir('console');
}

/** Which service emits an event type, by the type's first word (contract section 11). */
const EVENT_SOURCES: Record<string, ServiceName> = { ticket: 'events', item: 'warehouse', reservation: 'warehouse', run: 'pipelines' };

/**
 * What the console needs from the contract, from @platform/core so the page never carries a
 * copy: the scopes of the key form, the rate limit buckets with the platform's limit per minute
 * (a key's own limits replace them) and the highest limit a key may set, each service's prefix,
 * whether the gateway routes its webhook endpoints yet, and the event types it emits.
 */
export function consoleMeta() {
  const services = (Object.keys(SERVICES) as ServiceName[]).map((name) => ({
    name,
    prefix: SERVICES[name].prefix,
    webhooks: 'GET /webhook-endpoints' in ROUTES[name],
    event_types: EVENT_TYPES.filter((type) => {
      const source = EVENT_SOURCES[type.split('.')[0]!];
      return source === undefined || source === name;
    }),
  }));
  const rateLimitBuckets = (Object.keys(BUCKET_LIMITS) as BucketName[]).map((name) => ({ name, limit: BUCKET_LIMITS[name] }));
  return { version: DEFAULT_VERSION, scopes: SCOPES, rate_limit_buckets: rateLimitBuckets, rate_limit_max: MAX_KEY_RATE_LIMIT, services };
}

/** The built console's files (read once, see loadPageAssets) and its meta.json. */
export function loadConsoleAssets(dir: string): ConsoleAssets {
  const assets = loadPageAssets(dir, CONSOLE_PATH);
  assets.set(`${CONSOLE_PATH}/meta.json`, pageAsset(Buffer.from(JSON.stringify(consoleMeta())), CONTENT_TYPES['.json']!));
  return assets;
}
