/**
 * zod schemas as JSON Schema 2020-12 (the dialect of OpenAPI 3.1): named schemas become
 * `components.schemas`, and the examples their metadata gives become the document's.
 */
import { z } from 'zod';

export type JsonSchema = { [keyword: string]: unknown };

/** The first example a schema's metadata gives, if any. */
export function exampleOf(schema: z.ZodType): unknown {
  const examples = z.globalRegistry.get(schema)?.examples;
  return Array.isArray(examples) ? examples[0] : undefined;
}

/** The list body (contract section 2) of a resource; the resource's example becomes the list's. */
export function listOf<T extends z.ZodType>(item: T, id: string) {
  const example = exampleOf(item);
  return z
    .object({
      data: z.array(item),
      next_cursor: z.string().nullable().meta({ description: 'Pass as `?cursor=` to get the next page; null on the last page.' }),
    })
    .meta({ id, description: 'One page of a list, oldest first.', ...(example === undefined ? {} : { examples: [{ data: [example], next_cursor: null }] }) });
}

function isTransform(schema: z.core.$ZodType): boolean {
  return schema._zod.traits.has('$ZodTransform');
}

/**
 * Collects named schemas (zod `id` metadata) into `components.schemas` and converts the rest in
 * place. Each conversion is JSON Schema 2020-12, the dialect of OpenAPI 3.1.
 */
export class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};
  private readonly componentJson = new Map<string, string>();

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', override: (ctx) => this.refine(ctx, io) }) as JsonSchema;
    const { $schema: _dialect, $defs, ...rest } = json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) this.addComponent(id, refsToComponents(def) as JsonSchema);
    return refsToComponents(rest) as JsonSchema;
  }

  private addComponent(id: string, json: JsonSchema): void {
    const text = JSON.stringify(json);
    const known = this.componentJson.get(id);
    // Two different schemas under one name would make one of them lie.
    if (known !== undefined && known !== text) throw new Error(`two different schemas are named ${id} in one document`);
    this.componentJson.set(id, text);
    this.components[id] = json;
  }

  private refine(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: JsonSchema }, io: 'input' | 'output'): void {
    const { zodSchema, jsonSchema } = ctx;
    const def = zodSchema._zod.def;
    // An input passes both sides of a pipe whose first side does not transform (`Slug.pipe(length)`,
    // a required enum); zod documents only the first side, so the second side's keywords join it.
    if (io === 'input' && def.type === 'pipe' && !isTransform(def.in) && !isTransform(def.out)) {
      const out = this.convert(def.out as z.ZodType, 'input');
      if (!('$ref' in out)) for (const [keyword, value] of Object.entries(out)) if (!(keyword in jsonSchema)) jsonSchema[keyword] = value;
    }
    // The format says it all; zod's regex for it is long and loses our case-insensitive flag.
    if ((jsonSchema.format === 'uuid' || jsonSchema.format === 'date-time') && 'pattern' in jsonSchema) delete jsonSchema.pattern;
    // zod bounds every integer by the safe range; said on every integer, it is noise.
    if (jsonSchema.type === 'integer') {
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    }
    // Object keys are strings anyway.
    if (JSON.stringify(jsonSchema.propertyNames) === '{"type":"string"}') delete jsonSchema.propertyNames;
  }
}

function refsToComponents(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(refsToComponents);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof inner === 'string' ? inner.replace(/^#\/\$defs\//, '#/components/schemas/') : refsToComponents(inner);
  }
  return out;
}
