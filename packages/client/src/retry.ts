import { PlatformApiError, retryAfterSeconds } from './errors.js';

export interface RetryOptions {
  /** Tries after the first (default 3); 0 turns retrying off. */
  maxRetries?: number;
  /**
   * The longest wait before a retry (default 20 000 ms). An answer asking for longer
   * (`Retry-After` of a spent rate-limit bucket) is returned as it is rather than waited for.
   */
  maxDelayMs?: number;
  /** The first backoff step when the platform names no wait (default 250 ms), doubled per try. */
  baseDelayMs?: number;
  /**
   * Which requests may be sent again after no answer or a 503: those that cannot apply twice.
   * Default: all (the service clients send every POST and PATCH with an Idempotency-Key).
   */
  retryUnanswered?: (request: Request) => boolean;
  /** For tests: the wait. */
  sleep?: (ms: number, signal: AbortSignal | null) => Promise<void>;
  /** For tests: the random number in [0, 1) behind the jitter. */
  random?: () => number;
}

export type Fetch = (request: Request) => Promise<Response>;

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_MAX_DELAY_MS = 20_000;
export const DEFAULT_BASE_DELAY_MS = 250;

function abortableSleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Whether an answer means "not done, try again": 429 (rate limited, refused before anything ran),
 * 503 (a backend briefly unreachable; the gateway does not keep 5xx answers for an Idempotency-Key,
 * so the retry runs or replays) and a 409 with `Retry-After` (the first request with this
 * Idempotency-Key is still running; a 409 for another body or a domain conflict has no Retry-After).
 */
function retryableStatus(response: Response): boolean {
  return response.status === 429 || response.status === 503 || (response.status === 409 && response.headers.has('retry-after'));
}

/**
 * A fetch that sends a request again, byte for byte and with the same headers (so the same
 * Idempotency-Key), after a network error, a 429, a 503 or an idempotency 409. It waits the
 * answer's `Retry-After` plus up to `baseDelayMs` of jitter (so clients refused together do not
 * come back together), or without one a "full jitter" exponential backoff; it never waits longer
 * than `maxDelayMs` and gives up after `maxRetries` retries: then the last answer is returned, or
 * the last network error thrown as a `PlatformApiError` with status 0.
 */
export function retryingFetch(fetchImpl: Fetch, options: RetryOptions = {}): Fetch {
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const baseDelayMs = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const backoff = (attempt: number): number => Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt));

  return async (request) => {
    const mayResend = options.retryUnanswered?.(request) ?? true;
    // A request body can be read once: buffer it, so every try sends the same bytes.
    const body = request.body === null ? undefined : await request.arrayBuffer();
    // A copy of the request keeps every option of the caller's (keepalive, cache, credentials,
    // redirect, signal, ...): a page revoking a key on pagehide needs its keepalive on every try.
    const attempt = (): Request => new Request(request, { body });
    for (let tries = 0; ; tries++) {
      let response: Response;
      try {
        response = await fetchImpl(attempt());
      } catch (err) {
        if (request.signal.aborted) throw err;
        if (!mayResend || tries >= maxRetries) {
          throw new PlatformApiError(0, { code: 'network_error', message: `No answer from ${request.method} ${request.url}: ${String(err)}` }, { cause: err });
        }
        await sleep(backoff(tries), request.signal);
        continue;
      }
      if (tries >= maxRetries || !retryableStatus(response) || (response.status === 503 && !mayResend)) return response;
      const asked = retryAfterSeconds(response);
      if (asked !== undefined && asked * 1000 > maxDelayMs) return response;
      // The answer is dropped: release its connection (not awaited: a tee'd body settles only when both branches are cancelled).
      void response.body?.cancel().catch(() => undefined);
      await sleep(asked === undefined ? backoff(tries) : asked * 1000 + Math.floor(random() * baseDelayMs), request.signal);
    }
  };
}
