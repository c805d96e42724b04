import { z } from 'zod';

/**
 * An enum field that is required: missing is `required`, any other value (a wrong string, a
 * number, null) is `invalid_enum` (a bare z.enum reports a missing field as invalid_enum too).
 */
export function requiredEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return z
    .unknown()
    .refine((value) => value !== undefined, { message: 'is required', params: { code: 'required' }, abort: true })
    .pipe(z.enum(values, { error: `must be one of ${values.join(', ')}` }));
}
