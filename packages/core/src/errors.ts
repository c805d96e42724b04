import { z } from 'zod';

/** One problem in a request, as listed in the error body's `errors[]`. */
export const FieldError = z
  .object({
    in: z.enum(['body', 'path', 'query', 'header']),
    field: z.string().meta({ description: 'Dotted path of the field; `""` for the whole body.' }),
    code: z.string().meta({ description: 'Machine word: `required`, `invalid_type`, `too_long`, `too_many_keys`, `invalid_format`, `unknown_field`, `invalid_enum`, `taken`, ...' }),
    message: z.string(),
  })
  .meta({ id: 'FieldError', description: 'One problem in the request; a 400 lists every problem at once.' });
export type FieldError = z.infer<typeof FieldError>;

/** Every `error.code` the platform answers with (contract section 2). */
export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden_scope',
  'not_found',
  'conflict',
  'rate_limited',
  'temporarily_unavailable',
  'payload_too_large',
  'unsupported_media_type',
  'request_timeout',
  'internal_error',
] as const;
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

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

/**
 * The contract's error body (section 2). Endpoint-specific facts (`required_scope`, a ticket's
 * original validation, `active_run_id`) sit beside `code` inside `error`.
 */
export const ErrorBody = z
  .object({
    error: z.looseObject({
      code: ErrorCode,
      message: z.string(),
      errors: z.array(FieldError).optional().meta({ description: 'On 400 (one element per problem) and on some 409s.' }),
      request_id: z.string().meta({ description: 'The `x-request-id` of the request; quote it when asking for support.' }),
    }),
  })
  .meta({ id: 'Error', description: 'Every error answer has this body.' });
export type ErrorBody = z.infer<typeof ErrorBody>;

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
