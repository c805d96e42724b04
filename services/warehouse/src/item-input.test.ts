import {
  crossesBelowMinStock,
  ifMatchAccepts,
  ItemPatch,
  itemChanges,
  mergeMetadata,
  metadataErrors,
  parseFields,
  parseIfMatch,
  type ItemFields,
} from './item-input';

const stored: ItemFields = { sku: 'A', name: 'Anvil', category: 'tools', minStock: 2, locationId: null, metadata: { colour: 'black', size: 'L' } };

describe('mergeMetadata (RFC 7396 onto a flat string map)', () => {
  test('sets, replaces and removes keys; absent keys stay', () => {
    expect(mergeMetadata({ a: '1', b: '2' }, { a: 'x', b: null, c: '3' })).toEqual({ a: 'x', c: '3' });
  });
  test('null as the whole patch clears everything', () => {
    expect(mergeMetadata({ a: '1' }, null)).toEqual({});
  });
  test('removing an absent key is a no-op', () => {
    expect(mergeMetadata({ a: '1' }, { z: null })).toEqual({ a: '1' });
  });
  test('"__proto__" is an ordinary key, not the prototype', () => {
    const merged = mergeMetadata({}, JSON.parse('{"__proto__": "x"}'));
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
  });
});

describe('metadataErrors', () => {
  test('20 keys are fine, 21 are too_many_keys', () => {
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, '']));
    expect(metadataErrors(twenty)).toEqual([]);
    expect(metadataErrors({ ...twenty, extra: '' })).toEqual([expect.objectContaining({ field: 'metadata', code: 'too_many_keys' })]);
  });
});

describe('itemChanges', () => {
  test('keeps only fields whose value differs', () => {
    expect(itemChanges(stored, { sku: 'A', name: 'Hammer', category: 'tools', min_stock: null, metadata: { colour: 'black' } })).toEqual({
      name: 'Hammer',
      minStock: null,
    });
  });
  test('a merge that changes the metadata yields the merged object', () => {
    expect(itemChanges(stored, { metadata: { size: null } })).toEqual({ metadata: { colour: 'black' } });
  });
  test('a location set to its current value is no change', () => {
    const located = { ...stored, locationId: '6f1c2c8e-0000-4000-8000-000000000001' };
    expect(itemChanges(located, { location_id: located.locationId })).toEqual({});
    expect(itemChanges(located, { location_id: null })).toEqual({ locationId: null });
  });
});

describe('parseFields', () => {
  test('a valid body parses whole', () => {
    const parsed = parseFields(ItemPatch, { name: 'x', location_id: '6F1C2C8E-0000-4000-8000-000000000001' });
    expect(parsed).toMatchObject({ ok: true, value: { name: 'x', location_id: '6f1c2c8e-0000-4000-8000-000000000001' } });
    expect(parsed.errors.total).toBe(0);
  });
  test('an invalid body keeps its valid fields for the checks that need the database', () => {
    const parsed = parseFields(ItemPatch, { name: '', metadata: { a: 'b' }, location_id: null, quantity: 4 });
    expect(parsed.ok).toBe(false);
    expect(parsed.value).toEqual({ metadata: { a: 'b' }, location_id: null });
    expect(parsed.errors.list.map((e) => [e.field, e.code])).toEqual([
      ['name', 'too_short'],
      ['quantity', 'unknown_field'],
    ]);
    expect(parsed.errors.list[1]!.message).toContain('stock-adjustments');
  });
});

describe('If-Match', () => {
  test.each([
    ['"3"', ['3']],
    ['*', '*'],
    [' "1" , "2"', ['1', '2']],
    ['W/"3"', []],
    ['3', undefined],
    ['"3', undefined],
    ['', undefined],
  ])('%j parses to %j', (value, expected) => {
    expect(parseIfMatch(value)).toEqual(expected);
  });
  test('matches the current version only (or anything for *)', () => {
    expect(ifMatchAccepts(['3'], 3)).toBe(true);
    expect(ifMatchAccepts(['2'], 3)).toBe(false);
    expect(ifMatchAccepts('*', 9)).toBe(true);
  });
});

describe('crossesBelowMinStock', () => {
  test.each([
    [5, 6, 4, true],
    [5, 5, 4, true],
    [5, 6, 5, false],
    [5, 4, 3, false],
    [null, 1, 0, false],
    [0, 1, 0, false],
  ])('min %p, %p -> %p: %p', (min, before, after, expected) => {
    expect(crossesBelowMinStock(min, before, after)).toBe(expected);
  });
});
