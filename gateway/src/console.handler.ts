import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ApiError } from '@platform/core';
import { CONSOLE_PATH, type ConsoleAssets } from './console.assets';
import { etagMatches } from './page-assets';
import { PAGE_CSP, PAGE_SECURITY_HEADERS } from './page-security';
import { sendError } from './responses';

/** The same policy as every page of the gateway's own. */
export const CONSOLE_CSP = PAGE_CSP;
export const CONSOLE_SECURITY_HEADERS = PAGE_SECURITY_HEADERS;

// File names carry no content hash, so browsers keep a copy but ask each time; the ETag makes
// that a 304 without a body. The page holds no secret (the token lives in script memory).
const CACHE_CONTROL = 'no-cache';

export function isConsolePath(pathname: string): boolean {
  return pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`);
}

/**
 * Serves the workspace console (static files held in memory) beside /admin/v1, off the proxied
 * hot path. `assets` undefined: the console was not built; /console answers 404 saying so.
 */
export function serveConsole(
  assets: ConsoleAssets | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  base: OutgoingHttpHeaders,
  requestId: string,
): void {
  const headers: OutgoingHttpHeaders = { ...base, ...CONSOLE_SECURITY_HEADERS };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    headers.allow = 'GET, HEAD';
    return sendError(res, new ApiError(405, 'invalid_request', 'The console accepts GET and HEAD only.'), requestId, headers);
  }
  const asset = assets?.get(pathname);
  if (!asset) {
    const message = assets ? 'No such console file.' : 'The console is not built into this gateway (run the gateway build).';
    return sendError(res, new ApiError(404, 'not_found', message), requestId, headers);
  }
  headers['cache-control'] = CACHE_CONTROL;
  headers.etag = asset.etag;
  if (etagMatches(req.headers['if-none-match'], asset.etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  headers['content-type'] = asset.contentType;
  headers['content-length'] = asset.body.length;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : asset.body);
}
