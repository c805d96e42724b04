import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { DEFAULT_VERSION, EVENT_TYPES, ROUTES, SCOPES, SERVICES, type ServiceName } from '@platform/core';

/** The URL path the workspace console is served under. */
export const CONSOLE_PATH = '/console';

/** One file of the console, held in memory with its precomputed validator. */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

/** URL path (`/console/main.js`) → asset; `/console` and `/console/` are the page. */
export type ConsoleAssets = ReadonlyMap<string, ConsoleAsset>;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function asset(body: Buffer, contentType: string): ConsoleAsset {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Where `tsc` and `console/copy-static.mjs` put the built console: beside this file in `dist/`,
 * or `dist/console` seen from `src/` when the gateway runs from source (jest).
 */
export function defaultConsoleDir(): string | undefined {
  return [join(__dirname, 'console'), join(__dirname, '..', 'dist', 'console')].find((dir) => existsSync(join(dir, 'index.html')));
}

/** Which service emits an event type, by the type's first word (contract section 11). */
const EVENT_SOURCES: Record<string, ServiceName> = { ticket: 'events', item: 'warehouse', run: 'pipelines' };

/**
 * What the console needs from the contract, from @platform/core so the page never carries a
 * copy: the scopes of the key form, each service's prefix, whether the gateway routes its
 * webhook endpoints yet, and the event types it emits.
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
  return { version: DEFAULT_VERSION, scopes: SCOPES, services };
}

/**
 * Reads every servable file under `dir` once (a handful of small files), so a request never
 * touches the file system and no request path can name a file outside this set.
 */
export function loadConsoleAssets(dir: string): ConsoleAssets {
  const assets = new Map<string, ConsoleAsset>();
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      const contentType = CONTENT_TYPES[extname(entry.name)];
      if (!entry.isFile() || contentType === undefined) continue;
      assets.set(`${CONSOLE_PATH}/${relative(dir, path).split(sep).join('/')}`, asset(readFileSync(path), contentType));
    }
  };
  walk(dir);
  const page = assets.get(`${CONSOLE_PATH}/index.html`);
  if (!page) throw new Error(`console page missing: ${join(dir, 'index.html')}`);
  assets.set(CONSOLE_PATH, page);
  assets.set(`${CONSOLE_PATH}/`, page);
  assets.set(`${CONSOLE_PATH}/meta.json`, asset(Buffer.from(JSON.stringify(consoleMeta())), CONTENT_TYPES['.json']!));
  return assets;
}
