import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';

/** One file of a page of the gateway's own (/console, /docs), held in memory with its validator. */
export interface PageAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

/** URL path (`/docs/docs.js`) → asset; the page's own path, with and without `/`, is its index.html. */
export type PageAssets = ReadonlyMap<string, PageAsset>;

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Where a page of @platform/console (`console`, `docs`) was built: its package's `dist/<name>`,
 * undefined when it has not been built.
 */
export function builtPageDir(name: string): string | undefined {
  const dir = join(dirname(require.resolve('@platform/console/package.json')), 'dist', name);
  return existsSync(join(dir, 'index.html')) ? dir : undefined;
}

export function pageAsset(body: Buffer, contentType: string): PageAsset {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Reads every servable file under `dir` once (a handful of small files), so a request never
 * touches the file system and no request path can name a file outside this set.
 */
export function loadPageAssets(dir: string, urlPath: string): Map<string, PageAsset> {
  const assets = new Map<string, PageAsset>();
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      const contentType = CONTENT_TYPES[extname(entry.name)];
      if (!entry.isFile() || contentType === undefined) continue;
      assets.set(`${urlPath}/${relative(dir, path).split(sep).join('/')}`, pageAsset(readFileSync(path), contentType));
    }
  };
  walk(dir);
  const page = assets.get(`${urlPath}/index.html`);
  if (!page) throw new Error(`page missing: ${join(dir, 'index.html')}`);
  assets.set(urlPath, page);
  assets.set(`${urlPath}/`, page);
  return assets;
}

/** Whether an `If-None-Match` header names this ETag (or `*`): the client's copy is current. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.trim() === '*' || header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}
