import { z } from 'zod';
import { type FieldError } from './errors';

type Location = FieldError['in'];

function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

function lengthCode(issue: { origin?: string }, direction: 'big' | 'small'): string {
  switch (issue.origin) {
    case 'string':
      return direction === 'big' ? 'too_long' : 'too_short';
    case 'array':
    case 'set':
      return direction === 'big' ? 'too_many_items' : 'too_few_items';
    default:
      return direction === 'big' ? 'too_large' : 'too_small';
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Turns zod issues into the contract's `errors[]`, one element per problem; `input` tells a missing field from a wrong one. */
export function fieldErrorsFromZod(error: z.ZodError, location: Location, input?: unknown): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const field = dotted(issue.path);
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          out.push({ in: location, field: field ? `${field}.${key}` : key, code: 'unknown_field', message: 'is not a known field' });
        }
        break;
      case 'invalid_type':
        if (valueAt(input, issue.path) === undefined) out.push({ in: location, field, code: 'required', message: 'is required' });
        else out.push({ in: location, field, code: 'invalid_type', message: `must be ${issue.expected}` });
        break;
      case 'too_big':
        out.push({ in: location, field, code: lengthCode(issue, 'big'), message: issue.message });
        break;
      case 'too_small':
        out.push({ in: location, field, code: lengthCode(issue, 'small'), message: issue.message });
        break;
      case 'invalid_format':
        out.push({ in: location, field, code: 'invalid_format', message: issue.message });
        break;
      case 'invalid_value':
        if (valueAt(input, issue.path) === undefined) out.push({ in: location, field, code: 'required', message: 'is required' });
        else out.push({ in: location, field, code: 'invalid_enum', message: issue.message });
        break;
      case 'custom':
        out.push({ in: location, field, code: String(issue.params?.code ?? 'invalid'), message: issue.message });
        break;
      default:
        out.push({ in: location, field, code: 'invalid', message: issue.message });
    }
  }
  return out;
}

/** A UUID path or body id (any version, as the contract only says "UUID"). */
export const Uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID')
  .meta({ format: 'uuid' });

/** Slug: lowercase words joined by hyphens (gates, categories). */
export const Slug = z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be a slug (lowercase words joined by hyphens)');

/** A string whose length is counted in Unicode code points, as the contract requires. */
export function codePointString(min: number, max: number): z.ZodString {
  return (
    z
      .string()
      .refine((s) => [...s].length >= min, { message: `must be at least ${min} characters`, params: { code: 'too_short' } })
      .refine((s) => [...s].length <= max, { message: `must be at most ${max} characters`, params: { code: 'too_long' } })
      // The refinements are invisible to JSON Schema; its minLength/maxLength count code points too.
      .meta({ minLength: min, maxLength: max }) as unknown as z.ZodString
  );
}

/** RFC 3339 timestamp with an offset; parsed to a Date. */
export const Timestamp = z.iso
  .datetime({ offset: true, message: 'must be an RFC 3339 timestamp' })
  .transform((s) => new Date(s));

/** A timestamp as the API renders it: RFC 3339 in UTC with milliseconds (`2024-12-01T09:30:00.000Z`). */
export const UtcTimestamp = z.iso.datetime({ precision: 3 }).meta({ examples: ['2024-12-01T09:30:00.000Z'] });

/** Renders a Date as the contract's timestamp: RFC 3339 UTC with milliseconds. */
export function timestamp(date: Date): string;
export function timestamp(date: Date | null): string | null;
export function timestamp(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}
