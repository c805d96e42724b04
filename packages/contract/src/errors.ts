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
export type ErrorCodeName = (typeof ERROR_CODES)[number];

/** At most this many elements in `errors[]` (contract section 2); `errors_total` counts the rest. */
export const MAX_FIELD_ERRORS = 100;
