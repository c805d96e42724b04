// Schemas as the reader needs them: a type label per field, its constraints in words, tables of
// properties whose nested objects open on demand, and the branches of a union.
import { markdown } from './markdown.js';
import { deref, refName, type OpenApiDocument, type Schema } from './openapi.js';
import { el, lazyDetails, type Child, type ViewElement } from './view.js';

/** How deep nested objects open; the documents' deepest real nesting is well within it. */
const MAX_DEPTH = 8;

/** Branches of a union, without the `null` one. */
export function branches(schema: Schema): Schema[] | undefined {
  const list = schema.oneOf ?? schema.anyOf;
  return Array.isArray(list) ? list.filter((branch) => branch.type !== 'null') : undefined;
}

export function isNullable(schema: Schema): boolean {
  const list = schema.oneOf ?? schema.anyOf;
  return (Array.isArray(schema.type) && schema.type.includes('null')) || (Array.isArray(list) && list.some((branch) => branch.type === 'null'));
}

/** `connector: "sample"` for a branch told apart by a constant property. */
export function discriminatorLabel(schema: Schema): string | undefined {
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property && 'const' in property) return `${name}: ${JSON.stringify(property.const)}`;
  }
  return undefined;
}

/** A one-line type: `string (uuid)`, `array of Ticket`, `"a" | "b"`, `map of string`, `object (kind: "x" | kind: "y")`. */
export function typeLabel(doc: OpenApiDocument, schema: Schema | undefined): string {
  if (!schema || typeof schema !== 'object') return 'any';
  if (schema.$ref) return refName(schema.$ref);
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const union = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(union)) {
    const labels = union.map((branch) => typeLabel(doc, branch));
    // Objects told apart by a constant field read better by that field.
    const keys = union.map((branch) => (branch.$ref ? undefined : discriminatorLabel(branch)));
    return keys.every(Boolean) ? `object (${keys.join(' | ')})` : labels.join(' | ');
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) return schema.properties ? 'object' : 'any';
  const inner = (value: Schema | undefined): string => {
    const label = typeLabel(doc, value);
    return label.includes(' | ') ? `(${label})` : label;
  };
  return types
    .map((type) => {
      if (type === 'array') return `array of ${inner(schema.items)}`;
      if (type === 'object' && !schema.properties && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        return `map of ${inner(schema.additionalProperties)}`;
      }
      return schema.format && type !== 'null' ? `${type} (${schema.format})` : type;
    })
    .join(' | ');
}

/** The schema's constraints in words: `1-200 characters`, `at least 1`, `pattern ^a`, `default 20`. */
export function constraintText(schema: Schema): string[] {
  const parts: string[] = [];
  const range = (min: number | undefined, max: number | undefined, unit: string): void => {
    if (min !== undefined && max !== undefined) parts.push(min === max ? `exactly ${min}${unit}` : `${min}-${max}${unit}`);
    else if (min !== undefined) parts.push(`at least ${min}${unit}`);
    else if (max !== undefined) parts.push(`at most ${max}${unit}`);
  };
  range(schema.minLength, schema.maxLength, ' characters');
  range(schema.minimum, schema.maximum, '');
  range(schema.minItems, schema.maxItems, ' items');
  range(schema.minProperties, schema.maxProperties, ' keys');
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.not && 'const' in schema.not) parts.push(`not ${JSON.stringify(schema.not.const)}`);
  if (schema.pattern) parts.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts;
}

/** The object schemas a value may be (through refs, arrays and unions); empty for plain values. */
export function objectShapes(doc: OpenApiDocument, schema: Schema | undefined, depth = 0): Schema[] {
  if (depth > MAX_DEPTH) return [];
  const node = deref(doc, schema);
  if (node.properties) return [node];
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('array') && node.items) return objectShapes(doc, node.items, depth + 1);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') return objectShapes(doc, node.additionalProperties, depth + 1);
  const union = branches(node);
  return union ? union.flatMap((branch) => objectShapes(doc, branch, depth + 1)) : [];
}

/** A property's type with `| null` when the schema allows null and the label does not say so. */
function propertyType(doc: OpenApiDocument, property: Schema, plain: Schema): string {
  const label = typeLabel(doc, property);
  return label + (isNullable(plain) && !label.includes('null') ? ' | null' : '');
}

/** A property table of an object schema; nested objects open on demand. */
export function propertiesTable(doc: OpenApiDocument, schema: Schema, depth: number): Child[] {
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const resolved = deref(doc, property);
    const plain = property.$ref ? resolved : property;
    // A nullable field is a union of one branch and null: its constraints are the branch's.
    const [only, ...others] = branches(plain) ?? [];
    const constraints = constraintText(only && others.length === 0 ? { ...only, ...plain } : plain);
    const described = property.description ?? resolved.description;
    return el(
      'tr',
      {},
      el('td', {}, el('code', {}, name), required.has(name) ? el('span', { class: 'required' }, 'required') : null),
      el('td', {}, el('span', { class: 'type' }, propertyType(doc, property, plain))),
      el(
        'td',
        {},
        described ? markdown(described) : null,
        constraints.length ? el('p', { class: 'constraints' }, constraints.join(' · ')) : null,
        nested(doc, property, depth, name),
      ),
    );
  });
  return [
    el(
      'table',
      { class: 'props' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Field'), el('th', { scope: 'col' }, 'Type'), el('th', { scope: 'col' }, 'Description'))),
      el('tbody', {}, rows),
    ),
    schema.additionalProperties === false ? el('p', { class: 'constraints' }, 'No other fields.') : null,
  ];
}

/** A collapsed view of the objects a property holds, rendered when first opened. */
function nested(doc: OpenApiDocument, property: Schema, depth: number, name: string): ViewElement | null {
  if (depth >= MAX_DEPTH) return null;
  if (objectShapes(doc, property).length === 0) return null;
  return lazyDetails({ class: 'nested' }, `Fields of ${name}`, () => el('div', {}, schemaView(doc, property, depth + 1)));
}

/** A schema: its properties, its union branches, or its type and constraints. */
export function schemaView(doc: OpenApiDocument, schema: Schema | undefined, depth = 0): ViewElement {
  const node = deref(doc, schema);
  const description = node.description && depth === 0 ? markdown(node.description) : null;
  const union = branches(node);
  if (union && union.length > 1 && union.some((branch) => objectShapes(doc, branch).length)) {
    return el(
      'div',
      {},
      description,
      el('p', {}, node.oneOf ? 'One of:' : 'Any of:'),
      union.map((branch) => {
        const label = branch.$ref ? refName(branch.$ref) : (discriminatorLabel(deref(doc, branch)) ?? typeLabel(doc, branch));
        return el('details', { class: 'nested', open: depth === 0 }, el('summary', {}, label), el('div', {}, schemaView(doc, branch, depth + 1)));
      }),
    );
  }
  if (node.properties) return el('div', {}, description, propertiesTable(doc, node, depth));
  const shapes = objectShapes(doc, node);
  if (shapes.length === 1 && shapes[0]) {
    return el('div', {}, description, el('p', {}, el('span', { class: 'type' }, typeLabel(doc, schema))), propertiesTable(doc, shapes[0], depth));
  }
  const constraints = constraintText(node);
  return el(
    'div',
    {},
    description,
    el('p', {}, el('span', { class: 'type' }, typeLabel(doc, schema)), constraints.length ? ` · ${constraints.join(' · ')}` : ''),
  );
}

/** A document's example, folded, as indented JSON. */
export function exampleView(value: unknown, label = 'Example'): ViewElement {
  return el('details', { class: 'nested' }, el('summary', {}, label), el('pre', {}, el('code', {}, JSON.stringify(value, null, 2))));
}
