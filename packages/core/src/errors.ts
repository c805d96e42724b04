/** One problem in a request, as listed in the error body's `errors[]`. */
export interface FieldError {
  in: 'body' | 'path' | 'query' | 'header';
  field: string;
  code: string;
  message: string;
}

export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden_scope'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'temporarily_unavailable'
  | 'payload_too_large'
  | 'request_timeout'
  | 'internal_error';

/** An error that knows its HTTP status and contract error code; the error middleware renders it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      errors?: FieldError[];
      /** Endpoint-specific facts placed beside `code` inside `error`. */
      details?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** 400 invalid_request listing every problem. */
export function invalidRequest(errors: FieldError[], message = 'Request validation failed.'): ApiError {
  return new ApiError(400, 'invalid_request', message, { errors });
}

/** 404 not_found; also used for another workspace's resource. */
export function notFound(what = 'Resource'): ApiError {
  return new ApiError(404, 'not_found', `${what} not found.`);
}

/** 409 conflict with optional details and field errors. */
export function conflict(message: string, details?: Record<string, unknown>, errors?: FieldError[]): ApiError {
  return new ApiError(409, 'conflict', message, { details, errors });
}

export function unauthorized(message = 'Missing or invalid bearer token.'): ApiError {
  return new ApiError(401, 'unauthorized', message);
}

export function forbiddenScope(requiredScope: string): ApiError {
  return new ApiError(403, 'forbidden_scope', `This token lacks the scope ${requiredScope}.`, {
    details: { required_scope: requiredScope },
  });
}

export function temporarilyUnavailable(message = 'A backend is briefly unreachable; retry idempotently.'): ApiError {
  return new ApiError(503, 'temporarily_unavailable', message, { headers: { 'retry-after': '1' } });
}

export function payloadTooLarge(limitBytes: number): ApiError {
  return new ApiError(413, 'payload_too_large', `The request body exceeds ${limitBytes} bytes.`);
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    errors?: FieldError[];
    request_id: string;
    [detail: string]: unknown;
  };
}

/** The contract's error body (section 2) for an error. */
export function errorBody(error: ApiError, requestId: string): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...error.options.details,
      ...(error.options.errors ? { errors: error.options.errors } : {}),
      request_id: requestId,
    },
  };
}
