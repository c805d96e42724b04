import autocannon from 'autocannon';
import { percentile } from './stats';

export interface LoadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  connections: number;
  durationS: number;
  /** 2xx answers per second. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Latency of 2xx answers in ms, from every sample (autocannon's own histogram has 1 ms resolution). */
  p50: number;
  p99: number;
  statusCounts: Record<string, number>;
}

/**
 * Closed-loop load from autocannon: `connections` keep-alive connections, each sending the next
 * request from `next()` as soon as the previous answer arrived, for `durationS` seconds (or
 * `amount` requests). Loopback only.
 */
export async function runLoad(options: {
  url: string;
  connections: number;
  durationS?: number;
  amount?: number;
  /** At most this many requests per second over all connections (default: as fast as the answers come). */
  overallRate?: number;
  next: () => LoadRequest;
  /** Every answer: its status, when it arrived and when its request was sent (client clock, ms). */
  onAnswer?: (status: number, receivedAtMs: number, sentAtMs: number) => void;
}): Promise<LoadResult> {
  if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(options.url)) throw new Error(`load goes to loopback only: ${options.url}`);
  const latencies: number[] = [];
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    ...(options.amount ? { amount: options.amount } : { duration: options.durationS ?? 5 }),
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    timeout: 20,
    requests: [{ setupRequest: (request) => ({ ...request, ...options.next() }) }],
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, responseTimeMs: number) => {
    if (status >= 200 && status < 300) latencies.push(responseTimeMs);
    if (options.onAnswer) {
      const now = Date.now();
      options.onAnswer(status, now, now - responseTimeMs);
    }
  });
  const result = await instance;
  const sorted = Float64Array.from(latencies).sort();
  const statusCounts: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCounts[code] = count;
  return {
    connections: options.connections,
    durationS: result.duration,
    rps: result['2xx'] / result.duration,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    statusCounts,
  };
}
