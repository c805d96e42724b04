import { connect } from 'node:net';

/** What a server wrote on a raw connection, parsed as far as it goes. */
export interface RawAnswer {
  /** Status of the first response line (0: none). */
  status: number;
  /** Every status line seen, in order (a `100 Continue` before the real one shows here). */
  statusLines: string[];
  headers: Record<string, string>;
  body: string;
  json?: any;
  closedByServer: boolean;
  ms: number;
}

export interface RawScript {
  port: number;
  /** Written at once on connect. */
  head: string | Buffer;
  /** Then written one piece every `everyMs` (a slow client), until the answer or `maxMs`. */
  drip?: string;
  everyMs?: number;
  /** Stop as soon as the first response head is complete, without waiting for the close. */
  stopAtFirstHead?: boolean;
  maxMs: number;
}

function parse(text: string): Pick<RawAnswer, 'status' | 'statusLines' | 'headers' | 'body' | 'json'> {
  const statusLines = [...text.matchAll(/^HTTP\/1\.[01] \d{3}[^\r\n]*/gm)].map((m) => m[0]);
  // The final response: after any 1xx interim ones.
  let rest = text;
  while (/^HTTP\/1\.[01] 1\d\d/.test(rest) && rest.includes('\r\n\r\n')) rest = rest.slice(rest.indexOf('\r\n\r\n') + 4);
  const split = rest.indexOf('\r\n\r\n');
  const head = split >= 0 ? rest.slice(0, split) : rest;
  let body = split >= 0 ? rest.slice(split + 4) : '';
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = '';
    let at = 0;
    for (;;) {
      const end = body.indexOf('\r\n', at);
      if (end < 0) break;
      const size = parseInt(body.slice(at, end), 16);
      if (!size) break;
      decoded += body.slice(end + 2, end + 2 + size);
      at = end + 2 + size + 2;
    }
    body = decoded;
  } else if (headers['content-length']) body = body.slice(0, Number(headers['content-length']));
  let json: unknown;
  try {
    json = body ? JSON.parse(body) : undefined;
  } catch {
    // not JSON: the checks see `body`
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), statusLines, headers, body, json };
}

/**
 * A hand-written HTTP/1.1 exchange on 127.0.0.1: for what no client library sends (headers
 * trickled a byte at a time, `Expect: 100-continue` without the body).
 */
export function rawExchange(script: RawScript): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port: script.port });
    let text = '';
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ ...parse(text), closedByServer, ms: Date.now() - started });
    };
    const giveUp = setTimeout(() => finish(false), script.maxMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (script.stopAtFirstHead && text.includes('\r\n\r\n')) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(script.head);
      if (script.drip) {
        timer = setInterval(() => {
          if (i < script.drip!.length && !socket.destroyed) socket.write(script.drip![i++]!);
        }, script.everyMs ?? 200);
      }
    });
  });
}
