import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ApiError } from '@platform/core';
import { CONSOLE_PATH, type ConsoleAssets } from './console.assets';
import { sendError } from './responses';

/**
 * Only the gateway's own files run and are fetched: no inline script or style, no other origin,
 * no framing, no form submission (the forms are handled by the script; should it fail to load,
 * the browser must not send the admin token in a URL), and Trusted Types so no string can
 * become HTML or script (the console builds its DOM with textContent only).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** Headers on every /console answer, errors included. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

// File names carry no content hash, so browsers keep a copy but ask each time; the ETag makes
// that a 304 without a body. The page holds no secret (the token lives in script memory).
const CACHE_CONTROL = 'no-cache';

export function isConsolePath(pathname: string): boolean {
  return pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`);
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.trim() === '*' || header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
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
