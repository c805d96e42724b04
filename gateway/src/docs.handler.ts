import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { adminApiDocument } from '@platform/admin-api';
import { acceptsGzip, ADMIN_PREFIX, ApiError, MIN_COMPRESSED_BYTES, SERVICES, temporarilyUnavailable, type Logger, type ServiceName } from '@platform/core';
import { builtPageDir, CONTENT_TYPES, etagMatches, loadPageAssets, pageAsset, type PageAsset, type PageAssets } from './page-assets';
import type { Upstreams } from './proxy';
import { PAGE_CSP, PAGE_SECURITY_HEADERS } from './page-security';
import { sendError } from './responses';

/** The URL path of the API reference. */
export const DOCS_PATH = '/docs';

/** The same policy as every page of the gateway's own. */
export const DOCS_CSP = PAGE_CSP;

/** How long a service's document is reused: a deploy shows in the reference within this time. */
export const DOCS_CACHE_MS = 30_000;
/** A service that does not answer its document within this time is shown as unavailable. */
export const DOCS_FETCH_TIMEOUT_MS = 2_000;
// The documents are a few hundred KiB; anything far larger is not one.
const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;

/** A file of the page, the services list or a service's document. */
interface Asset extends PageAsset {
  /** The body gzipped, made at the first request that accepts it. */
  gzipped?: Buffer;
}

/** The built page (@platform/console's dist/docs: its HTML, scripts and style sheets), undefined when it was not built. */
export function defaultDocsDir(): string | undefined {
  return builtPageDir('docs');
}

/** Reads the page's files once; a request never touches the file system. */
export function loadDocsPage(dir: string): PageAssets {
  return loadPageAssets(dir, DOCS_PATH);
}

const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

/** Where the admin API's document is: the gateway's own, built from the declarations it mounts. */
export const ADMIN_DOCUMENT_PATH = `${DOCS_PATH}/admin.json`;

/** What the page lists, one tab each: every service, then the admin API, with its gateway prefix and where its document is. */
export function docsIndex() {
  return {
    services: [
      ...SERVICE_NAMES.map((name) => ({ name, prefix: SERVICES[name].prefix, document: `${DOCS_PATH}/${name}.json` })),
      { name: 'admin', prefix: ADMIN_PREFIX, document: ADMIN_DOCUMENT_PATH },
    ],
  };
}

type Fetched = { ok: true; document: Asset } | { ok: false; reason: string };

/**
 * Each service's OpenAPI document, fetched from the service's own `GET /openapi.json` (so every
 * service stays the source of its reference) and reused for DOCS_CACHE_MS. A failure is not kept:
 * the next request asks again.
 */
export class ApiDocuments {
  private readonly cache = new Map<ServiceName, { document: Asset; until: number }>();
  private readonly inFlight = new Map<ServiceName, Promise<Fetched>>();

  constructor(
    private readonly upstreams: Upstreams,
    private readonly logger: Logger,
    private readonly options: { cacheMs: number; timeoutMs: number } = { cacheMs: DOCS_CACHE_MS, timeoutMs: DOCS_FETCH_TIMEOUT_MS },
  ) {}

  async get(service: ServiceName): Promise<Fetched> {
    const cached = this.cache.get(service);
    if (cached && cached.until > Date.now()) return { ok: true, document: cached.document };
    let pending = this.inFlight.get(service);
    if (!pending) {
      pending = this.fetch(service).finally(() => this.inFlight.delete(service));
      this.inFlight.set(service, pending);
    }
    return pending;
  }

  private async fetch(service: ServiceName): Promise<Fetched> {
    const fetched = await this.fetchOnce(service);
    if (!fetched.ok) this.logger.warn({ service, reason: fetched.reason }, 'API document unavailable');
    return fetched;
  }

  private async fetchOnce(service: ServiceName): Promise<Fetched> {
    try {
      const res = await fetch(new URL('/openapi.json', this.upstreams[service]), {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      if (!res.ok) {
        await res.body?.cancel();
        return { ok: false, reason: `answered ${res.status}` };
      }
      const body = Buffer.from(await res.arrayBuffer());
      if (body.length > MAX_DOCUMENT_BYTES) return { ok: false, reason: 'answered a document too large' };
      const parsed = JSON.parse(body.toString('utf8')) as { openapi?: unknown };
      if (typeof parsed.openapi !== 'string') return { ok: false, reason: 'answered something that is not an OpenAPI document' };
      const document: Asset = pageAsset(body, CONTENT_TYPES['.json']!);
      this.cache.set(service, { document, until: Date.now() + this.options.cacheMs });
      return { ok: true, document };
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
  }
}

export interface DocsSite {
  page?: PageAssets;
  documents: ApiDocuments;
  index: Asset;
  /** The admin API's document: it lives in this process, so it is built once and never unavailable. */
  admin: Asset;
}

const jsonAsset = (value: unknown): Asset => pageAsset(Buffer.from(JSON.stringify(value)), CONTENT_TYPES['.json']!);

/** The reference site: the page's files (undefined when not found), the services' documents and the admin API's. */
export function docsSite(upstreams: Upstreams, page: PageAssets | undefined, logger: Logger, options?: { cacheMs: number; timeoutMs: number }): DocsSite {
  return { page, documents: new ApiDocuments(upstreams, logger, options), index: jsonAsset(docsIndex()), admin: jsonAsset(adminApiDocument()) };
}

export function isDocsPath(pathname: string): boolean {
  return pathname === DOCS_PATH || pathname.startsWith(`${DOCS_PATH}/`);
}

function sendAsset(req: IncomingMessage, res: ServerResponse, file: Asset, headers: OutgoingHttpHeaders): void {
  // No content hash in the names: browsers keep a copy but ask each time, a 304 when unchanged.
  headers['cache-control'] = 'no-cache';
  headers.etag = file.etag;
  if (etagMatches(req.headers['if-none-match'], file.etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  headers['content-type'] = file.contentType;
  let body = file.body;
  // The services' documents are large JSON (166 KB, 12 KB gzipped): compressed once, then reused.
  if (body.length >= MIN_COMPRESSED_BYTES && file.contentType.startsWith('application/json')) {
    headers.vary = 'Accept-Encoding';
    if (acceptsGzip(req.headers['accept-encoding'])) {
      body = file.gzipped ??= gzipSync(file.body);
      headers['content-encoding'] = 'gzip';
    }
  }
  headers['content-length'] = body.length;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * Serves the API reference beside /admin/v1, off the proxied hot path: the page, its script and
 * style sheet, `/docs/services.json`, `/docs/{service}.json` (503 while a service cannot give
 * its document; the page shows that section as unavailable) and `/docs/admin.json`.
 */
export async function serveDocs(
  site: DocsSite,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  base: OutgoingHttpHeaders,
  requestId: string,
): Promise<void> {
  const headers: OutgoingHttpHeaders = { ...base, ...PAGE_SECURITY_HEADERS };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    headers.allow = 'GET, HEAD';
    return sendError(res, new ApiError(405, 'invalid_request', 'The API reference accepts GET and HEAD only.'), requestId, headers);
  }
  if (pathname === `${DOCS_PATH}/services.json`) return sendAsset(req, res, site.index, headers);
  if (pathname === ADMIN_DOCUMENT_PATH) return sendAsset(req, res, site.admin, headers);
  const service = /^\/docs\/([a-z]+)\.json$/.exec(pathname)?.[1];
  if (service !== undefined && (SERVICE_NAMES as string[]).includes(service)) {
    const fetched = await site.documents.get(service as ServiceName);
    if (fetched.ok) return sendAsset(req, res, fetched.document, headers);
    return sendError(res, temporarilyUnavailable(`The ${service} service cannot give its API document right now.`), requestId, headers);
  }
  const file = site.page?.get(pathname);
  if (file) return sendAsset(req, res, file, headers);
  const message = site.page ? 'No such page of the API reference.' : 'The API reference page is not built into this gateway (run the gateway build).';
  sendError(res, new ApiError(404, 'not_found', message), requestId, headers);
}
