import http from 'node:http';

/** What came back, or `error` ('timeout' when the battery gave up: its definition of a hang). */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Raw bytes of the body. */
  raw: Buffer;
  text: string;
  /** The parsed body when it was JSON. */
  json?: any;
  ms: number;
  error?: string;
}

export interface SendOptions {
  method?: string;
  /** Sent as written: percent-escapes, invalid ones included, are not touched. */
  path: string;
  headers?: Record<string, string>;
  /** A string or an object is sent as JSON text; a Buffer as these exact bytes. */
  body?: unknown;
  timeoutMs?: number;
}

type Observer = (request: { method: string; url: string }, answer: Answer) => void;

const observers = new Set<Observer>();

/** Sees every answer the battery receives (the headers category checks them all). */
export function observeAnswers(observer: Observer): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** The bytes of a request body: Buffers as they are, strings as UTF-8, anything else as JSON text. */
export function bodyBytes(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}

/**
 * One HTTP/1.1 request to 127.0.0.1 with a hard timeout; never throws (status 0 with `error`).
 * node:http sends the path exactly as given, which fetch would not (it normalises escapes).
 */
export function send(base: string, options: SendOptions): Promise<Answer> {
  const url = new URL(base);
  if (url.hostname !== '127.0.0.1') throw new Error(`the battery attacks 127.0.0.1 only: ${base}`);
  const method = options.method ?? 'GET';
  const body = bodyBytes(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined) {
    headers['content-type'] ??= 'application/json';
    if (headers['transfer-encoding'] === undefined) headers['content-length'] ??= String(body.length);
  }
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const full = { ...answer, ms: Date.now() - started };
      for (const observer of observers) observer({ method, url: `${base}${options.path}` }, full);
      resolve(full);
    };
    let responded = false;
    const req = http.request({ host: '127.0.0.1', port: Number(url.port), method, path: options.path, headers, agent }, (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', () => undefined);
      // A server that answers early (413) may close before the whole body was sent: the answer still counts.
      res.on('close', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let json: unknown;
        if (/json/.test(String(res.headers['content-type'] ?? '')) && text !== '') {
          try {
            json = JSON.parse(text);
          } catch {
            // not JSON after all: the checks see `text`
          }
        }
        finish({ status: res.statusCode ?? 0, headers: res.headers, raw, text, json });
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: 0, headers: {}, raw: Buffer.alloc(0), text: '', error: 'timeout' });
    }, options.timeoutMs ?? 8_000);
    req.on('error', (err) => {
      if (!responded) finish({ status: 0, headers: {}, raw: Buffer.alloc(0), text: '', error: err.message });
    });
    req.end(body);
  });
}

/** Problems with an error answer: the contract's body (section 2) and a JSON content type. */
export function errorBodyProblems(answer: Answer): string[] {
  const problems: string[] = [];
  if (!/^application\/json/.test(String(answer.headers['content-type'] ?? ''))) problems.push(`content-type ${answer.headers['content-type'] ?? '(none)'}`);
  const error = answer.json?.error;
  if (!error || typeof error !== 'object') return [...problems, `no error body: ${answer.text.slice(0, 160)}`];
  if (typeof error.code !== 'string') problems.push('error.code is not a string');
  if (typeof error.message !== 'string') problems.push('error.message is not a string');
  if (typeof error.request_id !== 'string') problems.push('error.request_id is not a string');
  if (error.errors !== undefined) {
    if (!Array.isArray(error.errors)) problems.push('error.errors is not an array');
    else {
      if (error.errors.length > 100) problems.push(`error.errors has ${error.errors.length} elements (at most 100)`);
      for (const e of error.errors.slice(0, 100)) {
        if (
          !e ||
          !['body', 'path', 'query', 'header'].includes(e.in) ||
          typeof e.field !== 'string' ||
          typeof e.code !== 'string' ||
          typeof e.message !== 'string'
        ) {
          problems.push(`malformed errors[] element ${JSON.stringify(e).slice(0, 120)}`);
          break;
        }
      }
    }
  }
  return problems;
}

/** A one-line account of an answer for the failure list. */
export function describe(answer: Answer): string {
  if (answer.status === 0) return `no answer (${answer.error})`;
  const code = answer.json?.error?.code;
  return `${answer.status}${code ? ` ${code}` : ''}`;
}

/** Runs `task` over `items` with at most `limit` at once, in order of start; stops starting new ones after `deadline`. */
export async function forEachLimited<T>(items: readonly T[], limit: number, deadline: number, task: (item: T) => Promise<void>): Promise<{ skipped: T[] }> {
  let next = 0;
  const skipped: T[] = [];
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      if (Date.now() > deadline) {
        skipped.push(item);
        continue;
      }
      await task(item);
    }
  });
  await Promise.all(workers);
  return { skipped };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
