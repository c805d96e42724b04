import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ApiError, errorBody } from '@platform/core';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A gateway-made JSON answer on a bare node:http response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders): void {
  const payload = JSON.stringify(body);
  headers['content-type'] = JSON_CONTENT_TYPE;
  headers['content-length'] = Buffer.byteLength(payload);
  res.writeHead(status, headers);
  res.end(payload);
}

/** The contract's error body (core `errorBody`) with the error's own headers. */
export function sendError(res: ServerResponse, error: ApiError, requestId: string, headers: OutgoingHttpHeaders): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(error.options.headers ?? {})) headers[name] = value;
  sendJson(res, error.status, errorBody(error, requestId), headers);
}
