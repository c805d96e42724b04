import { z } from 'zod';
import {
  codePointString,
  fieldErrorsFromZod,
  isStorableInstant,
  isWellFormedText,
  rawQueryErrors,
  Slug,
  stringMap,
  textRuleErrors,
  Timestamp,
  Uuid,
} from './validation';

function errorsOf(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input);
  if (result.success) throw new Error('expected a failure');
  return fieldErrorsFromZod(result.error, 'body', input).map((e) => [e.field, e.code]);
}

describe('fieldErrorsFromZod maps zod issues to the contract codes', () => {
  const Body = z.strictObject({
    name: codePointString(1, 5),
    count: z.number().int().max(3).optional(),
    kind: z.enum(['a', 'b']).optional(),
    id: Uuid.optional(),
    tags: z.array(z.string()).max(1).optional(),
    nested: z.strictObject({ slug: Slug }).optional(),
  });

  test('a missing field is required, a wrong type is invalid_type', () => {
    expect(errorsOf(Body, {})).toEqual([['name', 'required']]);
    expect(errorsOf(Body, { name: 7 })).toEqual([['name', 'invalid_type']]);
    expect(errorsOf(Body, { name: null })).toEqual([['name', 'invalid_type']]);
    expect(errorsOf(z.object({ kind: z.enum(['a']) }), {})).toEqual([['kind', 'required']]);
  });

  test('lengths count code points, not UTF-16 units', () => {
    expect(Body.safeParse({ name: '😀😀😀😀😀' }).success).toBe(true);
    expect(errorsOf(Body, { name: '😀😀😀😀😀😀' })).toEqual([['name', 'too_long']]);
    expect(errorsOf(Body, { name: '' })).toEqual([['name', 'too_short']]);
  });

  test('every problem is reported at once, with dotted paths and one element per unknown key', () => {
    expect(
      errorsOf(Body, { name: 'ok', count: 9, kind: 'c', id: 'x', tags: ['a', 'b'], nested: { slug: 'Not A Slug', extra: 1 }, other: 1, more: 2 }).sort(),
    ).toEqual(
      [
        ['count', 'too_large'],
        ['kind', 'invalid_enum'],
        ['id', 'invalid_format'],
        ['tags', 'too_many_items'],
        ['nested.slug', 'invalid_format'],
        ['nested.extra', 'unknown_field'],
        ['other', 'unknown_field'],
        ['more', 'unknown_field'],
      ].sort(),
    );
  });

  test('a custom refinement carries its own code', () => {
    const schema = z.object({
      m: z.record(z.string(), z.string()).refine((m) => Object.keys(m).length <= 1, { params: { code: 'too_many_keys' }, message: 'too many' }),
    });
    expect(errorsOf(schema, { m: { a: '1', b: '2' } })).toEqual([['m', 'too_many_keys']]);
  });
});

describe('the string rule', () => {
  test('well-formed Unicode without U+0000 passes; NUL and lone surrogates do not', () => {
    for (const ok of ['', 'plain', 'café', '😀', '\u{10FFFF}', 'tab\tnew\nline']) expect(isWellFormedText(ok)).toBe(true);
    for (const bad of ['\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83d', '\ude00x', '\ude00\ud83d']) expect(isWellFormedText(bad)).toBe(false);
  });

  test('the walk reports bad strings and keys at any depth, each at its dotted field', () => {
    const input = { a: 'ok', b: ['\u0000', { c: '\ud800' }], ['k\u0000']: 1, nested: { deeper: { ['\udc00']: 'x' } } };
    expect([...textRuleErrors(input, 'body')].map((e) => e.field)).toEqual(['b.0', 'b.1.c', 'k\u0000', 'nested.deeper.\udc00']);
    expect([...textRuleErrors(input, 'body', { opaque: ['b'] })].map((e) => e.field)).toEqual(['k\u0000', 'nested.deeper.\udc00']);
  });

  test('a raw query must percent-decode to such strings, names and values alike', () => {
    const fields = (q: string) => [...rawQueryErrors(q)].map((e) => e.field);
    expect(fields('sku=caf%C3%A9&limit=20&empty=&flag&a+b=c+d')).toEqual([]);
    expect(fields('sku=%C0')).toEqual(['sku']);
    expect(fields('sku=%00&x=%ED%A0%80&y=%ZZ&z=%E2%82')).toEqual(['sku', 'x', 'y', 'z']);
    expect(fields('%FF=1&ok=1')).toEqual(['%FF']);
    expect(fields('a%00=1')).toEqual(['a\u0000']);
  });
});

describe('Timestamp', () => {
  const at = z.object({ at: Timestamp });
  test.each(['0000-12-31T23:59:59Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:00:00-02:00', '0000-01-01T00:00:00.000Z'])('%s is out_of_range', (value) => {
    expect(errorsOf(at, { at: value })).toEqual([['at', 'out_of_range']]);
  });
  test('an instant in the years 0001-9999 becomes a Date', () => {
    expect(at.parse({ at: '2024-12-01T10:30:00+01:00' }).at.toISOString()).toBe('2024-12-01T09:30:00.000Z');
    expect(at.parse({ at: '0001-01-01T00:00:00Z' }).at.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(isStorableInstant(new Date('+010000-01-01T00:00:00Z'))).toBe(false);
    expect(isStorableInstant(new Date(Number.NaN))).toBe(false);
  });
});

describe('stringMap', () => {
  const Metadata = stringMap(codePointString(0, 3), { keyLength: { min: 1, max: 4 }, maxKeys: 3 });
  test('keeps __proto__ and constructor as own keys of an ordinary object', () => {
    const parsed = stringMap(z.string(), { keyLength: { min: 1, max: 500 } }).parse(JSON.parse('{"__proto__":"x","constructor":"y"}'));
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor']);
    expect(JSON.stringify(parsed)).toBe('{"__proto__":"x","constructor":"y"}');
  });
  test('checks every value, key length and the number of keys, all at once', () => {
    expect(errorsOf(z.object({ m: Metadata }), { m: { '': 'a', toolong: 'b', k: 'long', n: 5 } })).toEqual([
      ['m', 'too_many_keys'],
      ['m.', 'too_short'],
      ['m.toolong', 'too_long'],
      ['m.k', 'too_long'],
      ['m.n', 'invalid_type'],
    ]);
    expect(errorsOf(z.object({ m: Metadata }), { m: ['a'] })).toEqual([['m', 'invalid_type']]);
  });
  test('is documented as a map', () => {
    expect(z.toJSONSchema(Metadata, { io: 'input' })).toMatchObject({
      type: 'object',
      additionalProperties: { type: 'string', minLength: 0, maxLength: 3 },
      maxProperties: 3,
      propertyNames: { minLength: 1, maxLength: 4 },
    });
  });
});
