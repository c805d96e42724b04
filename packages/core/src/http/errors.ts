import { ERROR_CODES, MAX_FIELD_ERRORS } from '@platform/contract';
import { z } from 'zod';

/** One problem in a request, as listed in the error body's `errors[]`. */
export const FieldError = z
  .object({
    in: z.enum(['body', 'path', 'query', 'header']),
    field: z.string().meta({ description: 'Dotted path of the field; `""` for the whole body.' }),
    code: z.string().meta({
      description: 'Machine word: `required`, `invalid_type`, `too_long`, `too_many_keys`, `invalid_format`, `unknown_field`, `invalid_enum`, `taken`, ...',
    }),
    message: z.string(),
  })
  .meta({ id: 'FieldError', description: 'One problem in the request; a 400 lists every problem at once.' });
export type FieldError = z.infer<typeof FieldError>;

export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** A field longer than this (code points) is cut in `errors[]`: the answer stays small whatever key a client sends. */
const MAX_FIELD_LENGTH = 1024;

/**
 * A request's problems as `errors[]` lists them: keeps the first 100 and counts all, so that
 * any number of problems costs no more memory than 100.
 */
export class FieldErrors {
  readonly list: FieldError[] = [];
  total = 0;

  add(error: FieldError): void {
    this.total += 1;
    if (this.list.length < MAX_FIELD_ERRORS) this.list.push(error);
  }

  addAll(errors: Iterable<FieldError> | FieldErrors): void {
    if (errors instanceof FieldErrors) {
      for (const error of errors.list) this.add(error);
      this.total += errors.total - errors.list.length;
    } else for (const error of errors) this.add(error);
  }
}

/** An error that knows its HTTP status and contract error code; the error middleware renders it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      errors?: FieldError[];
      /** How many problems there were, when more than `errors` holds. */
      errorsTotal?: number;
      /** Endpoint-specific facts placed beside `code` inside `error`. */
      details?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** 400 invalid_request listing every problem (the first 100, with their number when there were more). */
export function invalidRequest(errors: FieldError[] | FieldErrors, message = 'Request validation failed.'): ApiError {
  let bounded = errors;
  if (!(bounded instanceof FieldErrors)) {
    bounded = new FieldErrors();
    bounded.addAll(errors);
  }
  return new ApiError(400, 'invalid_request', message, { errors: bounded.list, errorsTotal: bounded.total });
}

/** 404 not_found; also used for another workspace's resource. */
export function notFound(what = 'Resource'): ApiError {
  return new ApiError(404, 'not_found', `${what} not found.`);
}

/** 409 conflict with optional details and field errors. */
export function conflict(message: string, details?: Record<string, unknown>, errors?: FieldError[]): ApiError {
  return new ApiError(409, 'conflict', message, { details, errors });
}

/** 404 not_found for a path that matches no route. */
export function noSuchEndpoint(): ApiError {
  return new ApiError(404, 'not_found', 'No such endpoint.');
}

/** 429 rate_limited; the caller sets the rate-limit headers. */
export function rateLimited(): ApiError {
  return new ApiError(429, 'rate_limited', 'Rate limit exceeded; retry after the time in Retry-After.');
}

/** 500 internal_error: the answer for anything unexpected, which says nothing of the cause (it is logged). */
export function internalError(): ApiError {
  return new ApiError(500, 'internal_error', 'Something went wrong on our side.');
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
      errors: z
        .array(FieldError)
        .max(MAX_FIELD_ERRORS)
        .optional()
        .meta({ description: `On 400 (one element per problem, at most ${MAX_FIELD_ERRORS}) and on some 409s.` }),
      errors_total: z
        .int()
        .min(MAX_FIELD_ERRORS + 1)
        .optional()
        .meta({ description: `The number of problems, present only when there were more than the ${MAX_FIELD_ERRORS} that \`errors\` lists.` }),
      request_id: z.string().meta({ description: 'The `x-request-id` of the request; quote it when asking for support.' }),
    }),
  })
  .meta({ id: 'Error', description: 'Every error answer has this body.' });
export type ErrorBody = z.infer<typeof ErrorBody>;

const ILL_FORMED_UNITS = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A field as `errors[]` shows it: NUL and lone surrogates written as `\\uXXXX` text, at most 1024 code points. */
function shownField(field: string): string {
  const escaped = field.replace(ILL_FORMED_UNITS, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (escaped.length <= MAX_FIELD_LENGTH) return escaped;
  let cut = '';
  let count = 0;
  for (const point of escaped) {
    if (++count > MAX_FIELD_LENGTH) return `${[...cut].slice(0, MAX_FIELD_LENGTH - 1).join('')}…`;
    cut += point;
  }
  return escaped;
}

/** The contract's error body (section 2) for an error: `errors[]` holds at most 100 elements, `errors_total` says how many there were. */
export function errorBody(error: ApiError, requestId: string): ErrorBody {
  const { errors, errorsTotal } = error.options;
  const shown = errors?.slice(0, MAX_FIELD_ERRORS).map((e) => ({ ...e, field: shownField(e.field) }));
  const total = Math.max(errorsTotal ?? 0, errors?.length ?? 0);
  return {
    error: {
      code: error.code,
      message: error.message,
      ...error.options.details,
      ...(shown ? { errors: shown } : {}),
      ...(shown && total > shown.length ? { errors_total: total } : {}),
      request_id: requestId,
    },
  };
}
