import type { OpenApiDocument, Schema } from './openapi.js';
import { constraintText, exampleView, objectShapes, schemaView, typeLabel } from './schema.view.js';
import { ticketsDocument } from './test/documents.js';
import { elements, find, html, text } from './test/html.js';
import type { ViewElement } from './view.js';

const doc = ticketsDocument();
const schemas = doc.components!.schemas!;

/** The rows of the first property table: field, type, and the description cell's text (a folded nested view shows its summary). */
function rows(view: ViewElement): string[][] {
  const [, body] = find(view, 'table', { class: 'props' })[0]!.children as ViewElement[];
  return (body!.children as ViewElement[]).map((row) => row.children.map(text));
}

describe('type labels', () => {
  test.each<[string, Schema, string]>([
    ['a reference, by its component name', { $ref: '#/components/schemas/Ticket%20v2' }, 'Ticket v2'],
    ['a format', { type: 'string', format: 'uuid' }, 'string (uuid)'],
    ['a constant, as JSON', { const: 'sample' }, '"sample"'],
    ['an enum, as JSON values', { type: 'string', enum: ['issued', 'validated', 3] }, '"issued" | "validated" | 3'],
    ['several types, without a format on null', { type: ['string', 'null'], format: 'date-time' }, 'string (date-time) | null'],
    ['a nullable union', { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] }, 'string (date-time) | null'],
    ['an array of references', { type: 'array', items: { $ref: '#/components/schemas/Ticket' } }, 'array of Ticket'],
    ['an array of a union, in parentheses', { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, 'array of (string | null)'],
    ['an array without items', { type: 'array' }, 'array of any'],
    ['a map', { type: 'object', additionalProperties: { type: 'integer' } }, 'map of integer'],
    ['an object with properties', { properties: { a: { type: 'string' } } }, 'object'],
    [
      'objects told apart by a constant field',
      { oneOf: [{ properties: { kind: { const: 'a' } } }, { properties: { kind: { const: 'b' } } }] },
      'object (kind: "a" | kind: "b")',
    ],
    [
      'a union with a reference, by its branches',
      { oneOf: [{ $ref: '#/components/schemas/Ticket' }, { properties: { kind: { const: 'b' } } }] },
      'Ticket | object',
    ],
    ['nothing said', {}, 'any'],
  ])('%s', (_rule, schema, label) => {
    expect(typeLabel(doc, schema)).toBe(label);
  });

  test('a missing schema is any', () => {
    expect(typeLabel(doc, undefined)).toBe('any');
  });
});

describe('constraints in words', () => {
  test.each<[string, Schema, string[]]>([
    ['a length range', { minLength: 1, maxLength: 200 }, ['1-200 characters']],
    ['an exact length', { minLength: 36, maxLength: 36 }, ['exactly 36 characters']],
    ['a lower bound and a default', { minimum: 1, default: 20 }, ['at least 1', 'default 20']],
    ['an upper bound on items', { maxItems: 100 }, ['at most 100 items']],
    ['keys of a map', { minProperties: 1, maxProperties: 20 }, ['1-20 keys']],
    [
      'an exclusive minimum, an excluded constant and a pattern',
      { exclusiveMinimum: 0, not: { const: '' }, pattern: '^[a-z]+$' },
      ['> 0', 'not ""', 'pattern ^[a-z]+$'],
    ],
    ['a default of null, as JSON', { default: null }, ['default null']],
    ['none', { type: 'string' }, []],
  ])('%s', (_rule, schema, words) => {
    expect(constraintText(schema)).toEqual(words);
  });
});

describe('object shapes', () => {
  test('found through references, arrays, maps and unions; none for plain values', () => {
    expect(objectShapes(doc, { $ref: '#/components/schemas/Ticket' })).toEqual([schemas.Ticket]);
    expect(objectShapes(doc, schemas.TicketList!.properties!.data)).toEqual([schemas.Ticket]);
    expect(objectShapes(doc, { type: 'object', additionalProperties: { $ref: '#/components/schemas/Error' } })).toEqual([schemas.Error]);
    expect(objectShapes(doc, { anyOf: [{ $ref: '#/components/schemas/Ticket' }, { type: 'null' }] })).toEqual([schemas.Ticket]);
    expect(objectShapes(doc, { type: 'string' })).toEqual([]);
    expect(objectShapes(doc, { $ref: '#/components/schemas/Missing' })).toEqual([]);
  });

  test('references that point at each other end', () => {
    const loop = {
      openapi: '3.1.0',
      components: { schemas: { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } } },
    } as OpenApiDocument;
    expect(objectShapes(loop, { $ref: '#/components/schemas/A' })).toEqual([]);
    expect(text(schemaView(loop, { $ref: '#/components/schemas/A' }))).toBe('A');
  });
});

describe('schema view', () => {
  test("an object's fields: required marker, type with null, constraints (a nullable union's too) and description", () => {
    const view = schemaView(doc, { $ref: '#/components/schemas/Ticket' });
    expect(html(view.children[0]!)).toBe('<div class="markdown"><p>A ticket of an event.</p></div>');
    expect(rows(view)).toEqual([
      ['idrequired', 'string (uuid)', ''],
      ['statusrequired', '"issued" | "validated"', ''],
      ['holder_name', 'string | null', '1-200 characters'],
      ['validated_at', 'string (date-time) | null', ''],
      ['metadata', 'map of string', 'At most 20 keys.'],
    ]);
    expect(html(find(view, 'span', { class: 'required' })[0]!)).toBe('<span class="required">required</span>');
    expect(html(view.children.at(-1)!)).toBe('<p class="constraints">No other fields.</p>');
  });

  test('a field referencing a nullable schema says `| null` after the name', () => {
    const withRef = { ...doc, components: { schemas: { ...schemas, Cursor: { anyOf: [{ type: 'string', maxLength: 512 }, { type: 'null' }] } } } };
    expect(rows(schemaView(withRef, { properties: { next: { $ref: '#/components/schemas/Cursor' } } }))).toEqual([
      ['next', 'Cursor | null', 'at most 512 characters'],
    ]);
  });

  test("a nullable field's constraints are its branch's", () => {
    const nullable: Schema = { type: 'object', properties: { name: { anyOf: [{ type: 'string', maxLength: 200 }, { type: 'null' }] } } };
    expect(rows(schemaView(doc, nullable))).toEqual([['name', 'string | null', 'at most 200 characters']]);
  });

  test('a field holding objects opens to their fields only when asked (the nested view is built lazily)', () => {
    const view = schemaView(doc, { $ref: '#/components/schemas/TicketList' });
    const [details] = find(view, 'details', { class: 'nested' });
    expect(html(details!)).toBe('<details class="nested"><summary>Fields of data</summary></details>');
    const opened = details!.lazy!();
    expect(html(find(opened, 'p')[0]!)).toBe('<p><span class="type">array of Ticket</span></p>');
    expect(rows(opened).map(([field]) => field)).toEqual(['idrequired', 'statusrequired', 'holder_name', 'validated_at', 'metadata']);
  });

  test('an array of objects shows its type and then the fields of its items as a table', () => {
    const view = schemaView(doc, { type: 'array', items: { $ref: '#/components/schemas/Error' } });
    expect(view.children.map((child) => (typeof child === 'string' ? child : child.tag))).toEqual(['p', 'table']);
    expect(rows(view)).toEqual([['error', 'object', 'Fields of error']]);
  });

  test('a union of objects: "One of:" and a details per branch, named by its reference or its constant field, open at the top', () => {
    const union: Schema = {
      oneOf: [
        { $ref: '#/components/schemas/Ticket' },
        { type: 'object', properties: { kind: { const: 'http-json' }, url: { type: 'string' } } },
        { type: 'null' },
      ],
    };
    const view = schemaView(doc, union);
    expect(html(view.children[0]!)).toBe('<p>One of:</p>');
    const branches = view.children.slice(1) as ViewElement[];
    expect(branches.map((branch) => [branch.attributes.open, text(branch.children[0]!)])).toEqual([
      ['', 'Ticket'],
      ['', 'kind: "http-json"'],
    ]);
    expect(rows(branches[1]!.children[1] as ViewElement).map(([field, type]) => [field, type])).toEqual([
      ['kind', '"http-json"'],
      ['url', 'string'],
    ]);
    const nested = schemaView(doc, { anyOf: union.oneOf }, 1);
    expect(html(nested.children[0]!)).toBe('<p>Any of:</p>');
    expect((nested.children[1] as ViewElement).attributes.open).toBeUndefined();
  });

  test('a plain value: its type and constraints on one line', () => {
    expect(html(schemaView(doc, { type: 'integer', minimum: 1, maximum: 100, default: 20 }))).toBe(
      '<div><p><span class="type">integer</span> · 1-100 · default 20</p></div>',
    );
  });

  test('a self-referencing schema opens at most 8 levels deep', () => {
    const tree = {
      openapi: '3.1.0',
      components: { schemas: { Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } } },
    } as OpenApiDocument;
    const levels = elements(schemaView(tree, { $ref: '#/components/schemas/Node' })).filter((e) => e.tag === 'details').length;
    expect(levels).toBe(8);
  });
});

describe('examples', () => {
  test("the document's example as indented JSON, folded, its strings shown as text", () => {
    expect(html(exampleView({ name: '</script><script>alert(1)</script>', n: 1 }))).toBe(
      '<details class="nested"><summary>Example</summary><pre><code>{\n  "name": "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;",\n  "n": 1\n}</code></pre></details>',
    );
    expect(text(exampleView(null, 'Body').children[0]!)).toBe('Body');
  });
});
