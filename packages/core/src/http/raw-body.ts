import type { IncomingMessage } from 'node:http';

/**
 * The whole body of a request, or 'too_large' past `limitBytes` (the rest is drained so an answer
 * can still be sent), or 'aborted' when the client left before sending all of it.
 */
export function readRawBody(req: IncomingMessage, limitBytes: number): Promise<Buffer | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: Buffer | 'too_large' | 'aborted'): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limitBytes) {
        chunks.length = 0;
        settle('too_large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => settle(Buffer.concat(chunks, size)));
    req.on('error', () => settle('aborted'));
    req.on('close', () => settle(req.complete ? Buffer.concat(chunks, size) : 'aborted'));
  });
}
