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

/**
 * Turns zod issues into the contract's `errors[]` one problem at a time (a caller that keeps 100
 * never holds more); `input` tells a missing field from a wrong one.
 */
export function* zodFieldErrors(error: z.ZodError, location: Location, input?: unknown): Generator<FieldError> {
  for (const issue of error.issues) {
    const field = dotted(issue.path);
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          yield { in: location, field: field ? `${field}.${key}` : key, code: 'unknown_field', message: 'is not a known field' };
        }
        break;
      case 'invalid_type':
        if (valueAt(input, issue.path) === undefined) yield { in: location, field, code: 'required', message: 'is required' };
        else yield { in: location, field, code: 'invalid_type', message: `must be ${issue.expected}` };
        break;
      case 'too_big':
        yield { in: location, field, code: lengthCode(issue, 'big'), message: issue.message };
        break;
      case 'too_small':
        yield { in: location, field, code: lengthCode(issue, 'small'), message: issue.message };
        break;
      case 'invalid_format':
        yield { in: location, field, code: 'invalid_format', message: issue.message };
        break;
      case 'invalid_value':
        if (valueAt(input, issue.path) === undefined) yield { in: location, field, code: 'required', message: 'is required' };
        else yield { in: location, field, code: 'invalid_enum', message: issue.message };
        break;
      case 'custom':
        yield { in: location, field, code: String(issue.params?.code ?? 'invalid'), message: issue.message };
        break;
      default:
        yield { in: location, field, code: 'invalid', message: issue.message };
    }
  }
}

/** Turns zod issues into the contract's `errors[]`, one element per problem; `input` tells a missing field from a wrong one. */
export function fieldErrorsFromZod(error: z.ZodError, location: Location, input?: unknown): FieldError[] {
  return [...zodFieldErrors(error, location, input)];
}

/** U+0000, or a UTF-16 unit that is half of no surrogate pair (a lone surrogate). */
const ILL_FORMED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const TEXT_RULE_MESSAGE = 'must be well-formed Unicode without U+0000';

/** The string rule (contract section 2): well-formed Unicode (no lone surrogate) without U+0000. */
export function isWellFormedText(value: string): boolean {
  return !ILL_FORMED.test(value);
}

interface PathNode {
  key: string;
  parent: PathNode | undefined;
}

function fieldOf(node: PathNode | undefined): string {
  const keys: string[] = [];
  for (let n = node; n; n = n.parent) keys.push(n.key);
  return keys.reverse().join('.');
}

/**
 * Every string and object key in a parsed input (JSON body, route params) that breaks the string
 * rule, as `invalid_format` at its dotted field; a bad key is reported at the key itself. Walks
 * without recursion, so no nesting depth can overflow the stack. `opaque` names top-level arrays
 * whose elements are not walked: their handler judges each element on its own (bulk entries).
 */
export function* textRuleErrors(input: unknown, location: Location, options: { opaque?: readonly string[] } = {}): Generator<FieldError> {
  const stack: { value: unknown; node: PathNode | undefined; keyed?: boolean }[] = [{ value: input, node: undefined }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { value, node, keyed } = next;
    if (keyed && !isWellFormedText(node!.key)) yield { in: location, field: fieldOf(node), code: 'invalid_format', message: `key ${TEXT_RULE_MESSAGE}` };
    if (typeof value === 'string') {
      if (!isWellFormedText(value)) yield { in: location, field: fieldOf(node), code: 'invalid_format', message: TEXT_RULE_MESSAGE };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      if (node && !node.parent && options.opaque?.includes(node.key)) continue;
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], node: { key: String(i), parent: node } });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      stack.push({ value: (value as Record<string, unknown>)[key], node: { key, parent: node }, keyed: true });
    }
  }
}

/**
 * Problems of a raw query string (what follows `?` in the request target): every name and value
 * must be percent-decodable UTF-8 that obeys the string rule. The query parser would turn a bad
 * escape into U+FFFD and so change the input; this refuses it instead.
 */
export function* rawQueryErrors(rawQuery: string): Generator<FieldError> {
  if (rawQuery === '') return;
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const at = part.indexOf('=');
    const rawName = at === -1 ? part : part.slice(0, at);
    const name = strictDecode(rawName);
    const field = name ?? rawName;
    if (name === undefined || !isWellFormedText(name)) {
      yield { in: 'query', field, code: 'invalid_format', message: `name ${TEXT_RULE_MESSAGE} (as UTF-8, percent-encoded)` };
    }
    if (at === -1) continue;
    const value = strictDecode(part.slice(at + 1));
    if (value === undefined || !isWellFormedText(value)) {
      yield { in: 'query', field, code: 'invalid_format', message: `${TEXT_RULE_MESSAGE} (as UTF-8, percent-encoded)` };
    }
  }
}

/** A percent-encoded component as UTF-8 text, `+` as space (as the query parser reads it); undefined when it does not decode. */
export function strictDecode(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
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
      .meta({ minLength: min, maxLength: max })
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * A JSON object used as a map (metadata): every own key is checked and kept, `__proto__` and
 * `constructor` included, as an own key of the result (zod's record drops `__proto__`, and an
 * assignment would set the prototype instead). `keyLength` bounds keys in code points; `maxKeys`
 * bounds their number (`too_many_keys`).
 */
export function stringMap<V extends z.ZodType>(value: V, options: { keyLength?: { min: number; max: number }; maxKeys?: number } = {}) {
  const { keyLength, maxKeys } = options;
  const valueJson = z.toJSONSchema(value, { io: 'input', target: 'draft-2020-12' });
  const { $schema: _dialect, ...additionalProperties } = valueJson;
  return z
    .unknown()
    .transform((input, ctx): Record<string, z.output<V>> => {
      if (!isPlainObject(input)) {
        ctx.addIssue({ code: 'invalid_type', expected: 'object', input, message: 'must be object' });
        return z.NEVER;
      }
      const keys = Object.keys(input);
      if (maxKeys !== undefined && keys.length > maxKeys) {
        ctx.addIssue({ code: 'custom', message: `must have at most ${maxKeys} keys`, params: { code: 'too_many_keys' } });
      }
      const out: Record<string, z.output<V>> = {};
      for (const key of keys) {
        if (keyLength) {
          const length = [...key].length;
          if (length < keyLength.min) {
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: keyLength.min === 1 ? 'key must not be empty' : `key must be at least ${keyLength.min} characters`,
              params: { code: 'too_short' },
            });
          }
          if (length > keyLength.max) {
            ctx.addIssue({ code: 'custom', path: [key], message: `key must be at most ${keyLength.max} characters`, params: { code: 'too_long' } });
          }
        }
        const result = value.safeParse(input[key]);
        if (result.success) Object.defineProperty(out, key, { value: result.data, enumerable: true, writable: true, configurable: true });
        else for (const issue of result.error.issues) ctx.addIssue({ ...issue, path: [key, ...issue.path] });
      }
      return out;
    })
    .meta({
      type: 'object',
      additionalProperties,
      ...(maxKeys !== undefined ? { maxProperties: maxKeys } : {}),
      ...(keyLength ? { propertyNames: { minLength: keyLength.min, maxLength: keyLength.max } } : {}),
    });
}

const FIRST_STORABLE_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_STORABLE_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** The timestamp rule (contract section 2): a real instant in the UTC years 0001-9999, which every store can hold. */
export function isStorableInstant(date: Date): boolean {
  const ms = date.getTime();
  return ms >= FIRST_STORABLE_MS && ms <= LAST_STORABLE_MS;
}

export const TIMESTAMP_RANGE_MESSAGE = 'must lie in the years 0001-9999 as a UTC instant';

/** RFC 3339 timestamp with an offset, in the UTC years 0001-9999 (else `out_of_range`); parsed to a Date. */
export const Timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).transform((s, ctx) => {
  const date = new Date(s);
  if (Number.isNaN(date.getTime())) {
    ctx.addIssue({ code: 'custom', message: 'must be an RFC 3339 timestamp', params: { code: 'invalid_format' } });
    return z.NEVER;
  }
  if (!isStorableInstant(date)) {
    ctx.addIssue({ code: 'custom', message: TIMESTAMP_RANGE_MESSAGE, params: { code: 'out_of_range' } });
    return z.NEVER;
  }
  return date;
});

/** A timestamp as the API renders it: RFC 3339 in UTC with milliseconds (`2024-12-01T09:30:00.000Z`). */
export const UtcTimestamp = z.iso.datetime({ precision: 3 }).meta({ examples: ['2024-12-01T09:30:00.000Z'] });

/** Renders a Date as the contract's timestamp: RFC 3339 UTC with milliseconds. */
export function timestamp(date: Date): string;
export function timestamp(date: Date | null): string | null;
export function timestamp(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}
