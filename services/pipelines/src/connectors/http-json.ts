import { Agent, fetch, type Response } from 'undici';
import { z } from 'zod';
import { hostOfUrl, NonPublicAddressError, NOT_PUBLIC_MESSAGE, pinnedLookup, type CheckedAddress } from '@platform/address-guard';
import {
  ConnectorError,
  failedCheck,
  type CheckResult,
  type ConfigProblem,
  type ConnectorPolicy,
  type ConnectorRuntime,
  type SourceConnector,
  type SourceRecord,
} from './connector';

export const HttpJsonConfig = z.strictObject({
  url: z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).max(2048),
  records_path: z
    .string()
    .max(256)
    .regex(/^[^.\s]+(\.[^.\s]+)*$/, 'must be a dotted path such as data.items')
    .optional(),
});
export type HttpJsonConfig = z.output<typeof HttpJsonConfig>;

function valueAtPath(body: unknown, path: string | undefined): unknown {
  if (path === undefined) return body;
  let value = body;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

async function readBody(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new ConnectorError('source_error', `the source answered more than ${maxBytes} bytes`, false);
  }
  if (!response.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ConnectorError('source_error', `the source answered more than ${maxBytes} bytes`, false);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** Rate limits, timeouts and server errors may pass; other client errors will not. */
function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** The source's addresses, resolved once and checked by the address guard: the fetch connects to these only. */
async function sourceAddresses(url: URL, policy: ConnectorPolicy): Promise<CheckedAddress[]> {
  try {
    return await policy.addressGuard.resolve(url.hostname);
  } catch (err) {
    if (err instanceof NonPublicAddressError) throw new ConnectorError('source_error', `the source URL ${NOT_PUBLIC_MESSAGE}`, false, { cause: err });
    throw new ConnectorError('source_error', 'cannot connect to the source', true, { cause: err });
  }
}

/**
 * The records array of the source: one GET through the address guard (the name resolved once, the
 * connection pinned to the addresses checked), the body read under the size cap, `records_path`
 * followed. Failures are ConnectorErrors in the platform's words.
 */
async function fetchRecords(config: HttpJsonConfig, runtime: ConnectorRuntime, signal: AbortSignal): Promise<unknown[]> {
  const url = new URL(config.url);
  // The name is resolved once, here; the connection goes to the addresses checked (no DNS rebinding).
  // HTTP/1.1 as before undici 8 (which would speak HTTP/2 to a source that offers it): the pinned lookup and the byte bounds were tested on it.
  const dispatcher = new Agent({ allowH2: false, connect: { lookup: pinnedLookup(await sourceAddresses(url, runtime)) } });
  let text: string;
  try {
    const response = await fetch(url, {
      dispatcher,
      headers: { accept: 'application/json' },
      // A redirect could lead to a private address that the check above did not see.
      redirect: 'error',
      signal: AbortSignal.any([signal, AbortSignal.timeout(runtime.httpTimeoutMs)]),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new ConnectorError('source_error', `the source answered ${response.status}`, retryableStatus(response.status));
    }
    text = await readBody(response, runtime.httpMaxBytes);
  } catch (err) {
    if (err instanceof ConnectorError || signal.aborted) throw err;
    const message = (err as Error).name === 'TimeoutError' ? `the source did not answer within ${runtime.httpTimeoutMs} ms` : 'cannot connect to the source';
    throw new ConnectorError('source_error', message, true, { cause: err });
  } finally {
    await dispatcher.destroy().catch(() => undefined);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ConnectorError('source_error', 'the source did not answer JSON', false, { cause: err });
  }
  const records = valueAtPath(body, config.records_path);
  if (!Array.isArray(records)) {
    const where = config.records_path === undefined ? 'the body of the source' : `records_path "${config.records_path}" of the source`;
    throw new ConnectorError('source_error', `${where} is not an array`, false);
  }
  return records as unknown[];
}

/** A JSON array fetched with GET; `records_path` points into the body when the array is nested. */
export const httpJsonSource: SourceConnector<HttpJsonConfig> = {
  kind: 'source',
  name: 'http-json',
  description: 'A JSON array fetched with one GET from an http(s) URL; records_path points into the body when the array is nested.',
  config: HttpJsonConfig,
  render: (config) => {
    const url = new URL(config.url);
    if (url.password) url.password = '****';
    return { ...config, url: url.toString() };
  },
  async verify(config, policy): Promise<ConfigProblem[]> {
    try {
      await policy.addressGuard.check(hostOfUrl(config.url));
      return [];
    } catch (err) {
      if (err instanceof NonPublicAddressError) return [{ field: 'url', code: 'private_address', message: err.message }];
      throw err;
    }
  },
  async check(config, { runtime, signal }): Promise<CheckResult> {
    try {
      const records = await fetchRecords(config, runtime, signal);
      return { status: 'succeeded', message: `The source answered with an array of ${records.length} records.` };
    } catch (err) {
      return failedCheck(err, signal);
    }
  },
  async *read(config, { since, batchSize, signal, runtime }) {
    const records = await fetchRecords(config, runtime, signal);
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
