import { z } from 'zod';
import { ConnectorError, type SourceConnector, type SourceRecord } from './connector';
import { assertPublicHost } from './network';

export const HttpJsonConfig = z.strictObject({
  url: z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).max(2048),
  records_path: z
    .string()
    .max(256)
    .regex(/^[^.\s]+(\.[^.\s]+)*$/, 'must be a dotted path such as data.items')
    .optional(),
});
export type HttpJsonConfig = z.output<typeof HttpJsonConfig>;

/** The URL without credentials, query or fragment, for error messages a client will read. */
function shown(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function valueAtPath(body: unknown, path: string | undefined): unknown {
  if (path === undefined) return body;
  let value = body;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

async function readBody(response: Response, maxBytes: number, url: URL): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new ConnectorError('source_error', `${shown(url)} answered more than ${maxBytes} bytes`, false);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ConnectorError('source_error', `${shown(url)} answered more than ${maxBytes} bytes`, false);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** Rate limits, timeouts and server errors may pass; other client errors will not. */
function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** A JSON array fetched with GET; `records_path` points into the body when the array is nested. */
export const httpJsonSource: SourceConnector<HttpJsonConfig> = {
  kind: 'source',
  name: 'http-json',
  config: HttpJsonConfig,
  render: (config) => {
    const url = new URL(config.url);
    if (url.password) url.password = '****';
    return { ...config, url: url.toString() };
  },
  async *read(config, { since, batchSize, signal, runtime }) {
    const url = new URL(config.url);
    if (!runtime.allowPrivateNetworks) await assertPublicHost(url.hostname);
    let text: string;
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        // A redirect could lead to a private address that the check above did not see.
        redirect: 'error',
        signal: AbortSignal.any([signal, AbortSignal.timeout(runtime.httpTimeoutMs)]),
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new ConnectorError('source_error', `GET ${shown(url)} answered ${response.status}`, retryableStatus(response.status));
      }
      text = await readBody(response, runtime.httpMaxBytes, url);
    } catch (err) {
      if (err instanceof ConnectorError || signal.aborted) throw err;
      const reason = (err as Error).name === 'TimeoutError' ? `timed out after ${runtime.httpTimeoutMs} ms` : 'failed';
      throw new ConnectorError('source_error', `GET ${shown(url)} ${reason}`, true, { cause: err });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw new ConnectorError('source_error', `GET ${shown(url)} did not answer JSON`, false, { cause: err });
    }
    const records = valueAtPath(body, config.records_path);
    if (!Array.isArray(records)) {
      const where = config.records_path === undefined ? 'the body' : `records_path "${config.records_path}"`;
      throw new ConnectorError('source_error', `${where} of ${shown(url)} is not an array`, false);
    }
    // Records without a readable updated_at cannot be filtered, so they are always read.
    const selected = since
      ? records.filter((record: unknown) => {
          const updatedAt = (record as { updated_at?: unknown } | null)?.updated_at;
          const time = typeof updatedAt === 'string' ? Date.parse(updatedAt) : Number.NaN;
          return Number.isNaN(time) || time > since.getTime();
        })
      : records;
    for (let start = 0; start < selected.length; start += batchSize) {
      yield selected.slice(start, start + batchSize) as SourceRecord[];
    }
  },
};
