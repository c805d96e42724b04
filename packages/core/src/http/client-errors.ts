import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { DEFAULT_VERSION } from '../contract';
import { ApiError, errorBody } from './errors';
import { requestIdFrom } from './request-id';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** The contract's error for what node's HTTP parser or timers refused before any handler ran. */
function clientError(code: string | undefined): ApiError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'request_timeout', 'The request was not received in time.');
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError(431, 'invalid_request', 'The request headers are too large.');
  return new ApiError(400, 'invalid_request', 'The request is not valid HTTP.');
}

/**
 * Answers a client that node refuses before any handler runs (too slow to send its request,
 * malformed HTTP, oversized headers) with the contract's error body and headers instead of
 * node's bare status line (contract section 2), then closes the connection.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // An answer already under way for this connection cannot be replaced: only close.
    const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (err.code === 'ECONNRESET' || !socket.writable || inProgress) {
      socket.destroy();
      return;
    }
    const error = clientError(err.code);
    const requestId = requestIdFrom(undefined);
    const body = JSON.stringify(errorBody(error, requestId));
    socket.end(
      `HTTP/1.1 ${error.status} ${REASONS[error.status]}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\n` +
        `platform-version: ${DEFAULT_VERSION}\r\n` +
        'x-content-type-options: nosniff\r\n' +
        'connection: close\r\n\r\n' +
        body,
    );
  });
}
