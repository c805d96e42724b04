import { z } from 'zod';
import { codePointString, fieldErrorsFromZod, Slug, Uuid } from './validation';

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
    const schema = z.object({ m: z.record(z.string(), z.string()).refine((m) => Object.keys(m).length <= 1, { params: { code: 'too_many_keys' }, message: 'too many' }) });
    expect(errorsOf(schema, { m: { a: '1', b: '2' } })).toEqual([['m', 'too_many_keys']]);
  });
});
