/** One problem of a 400 (or 409) answer, as the platform reports it (contract section 2). */
export interface FieldError {
  in: 'body' | 'path' | 'query' | 'header';
  field: string;
  code: string;
  message: string;
}

/** The `error` object of every error answer. */
export interface ErrorDetail {
  code: string;
  message: string;
  errors?: FieldError[];
  errors_total?: number;
  request_id?: string;
  [fact: string]: unknown;
}

/**
 * What every failed call throws: the platform's error answer (`status` 4xx/5xx with its `code`,
 * `message`, `errors[]` and `request_id`), or, with `status` 0 and `code: 'network_error'`, a
 * request that got no answer after its last try (the failure is the `cause`).
 */
export class PlatformApiError extends Error {
  override readonly name = 'PlatformApiError';
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The platform's machine word (`invalid_request`, `not_found`, `rate_limited`, ...), or `network_error`. */
  readonly code: string;
  /** Every problem of a 400 (and of some 409s), else empty. */
  readonly errors: FieldError[];
  /** Quote it when asking for support; from the body, else the `x-request-id` header. */
  readonly requestId: string | undefined;
  /** The whole `error` object, with its endpoint-specific facts (`required_scope`, `active_run_id`, ...). */
  readonly details: ErrorDetail;
  /** Seconds the platform asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;

  constructor(status: number, details: ErrorDetail, options: { requestId?: string; retryAfter?: number; cause?: unknown } = {}) {
    super(details.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = details.code;
    this.errors = details.errors ?? [];
    this.requestId = details.request_id ?? options.requestId;
    this.details = details;
    this.retryAfter = options.retryAfter;
  }

  /** The contract's field name for `request_id`, for code that mirrors the error body. */
  get request_id(): string | undefined {
    return this.requestId;
  }
}

function isErrorBody(body: unknown): body is { error: ErrorDetail } {
  const error = (body as { error?: unknown } | null)?.error as ErrorDetail | undefined;
  return typeof error === 'object' && error !== null && typeof error.code === 'string' && typeof error.message === 'string';
}

/** Seconds of a `Retry-After` header (whole seconds or an HTTP date), undefined without a usable one. */
export function retryAfterSeconds(response: Response, now = Date.now()): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The error a non-2xx answer stands for; `body` is what it parsed to (the platform's error body, or anything a proxy sent). */
export function errorFromResponse(response: Response, body: unknown): PlatformApiError {
  const options = { requestId: response.headers.get('x-request-id') ?? undefined, retryAfter: retryAfterSeconds(response) };
  if (isErrorBody(body)) return new PlatformApiError(response.status, body.error, options);
  // Not the platform's answer (a proxy's HTML page, an empty 502): the status is all there is.
  return new PlatformApiError(response.status, { code: `http_${response.status}`, message: `HTTP ${response.status} ${response.statusText}`.trim() }, options);
}
