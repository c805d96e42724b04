import { z } from 'zod';
import { codePointString, FieldErrors, Slug, stringMap, Uuid, zodFieldErrors, type FieldError } from '@platform/core';

/** PostgreSQL `integer`, the column type of every count. */
export const INT4_MAX = 2_147_483_647;

/** Metadata limits (contract section 9): the stored object, after a merge patch. */
export const METADATA_MAX_KEYS = 20;
export const METADATA_MAX_LENGTH = 500;

export const Sku = codePointString(1, 64);
export const ItemName = codePointString(1, 200);
export const Category = Slug.pipe(codePointString(1, 64));
export const MinStock = z.int().min(0, 'must be at least 0').max(INT4_MAX, `must be at most ${INT4_MAX}`);
/** PostgreSQL renders UUIDs in lowercase; comparing with the stored value needs the same form. */
export const LocationId = Uuid.transform((id) => id.toLowerCase());

export type Metadata = Record<string, string>;

/**
 * A metadata merge patch (RFC 7396): string values set a key, null removes it. Every key is kept
 * as sent (`__proto__` too); key lengths are checked even when a value is wrong, so one 400 lists
 * every problem.
 */
export const MetadataPatch = stringMap(codePointString(0, METADATA_MAX_LENGTH).nullable(), { keyLength: { min: 1, max: METADATA_MAX_LENGTH } });
export type MetadataPatch = z.infer<typeof MetadataPatch>;

/** The fields PATCH /items/{id} may set; null clears category, min_stock, location_id and metadata. */
export const ItemPatch = z.strictObject({
  sku: Sku.optional(),
  name: ItemName.optional(),
  category: Category.nullable().optional(),
  min_stock: MinStock.nullable().optional(),
  location_id: LocationId.nullable().optional(),
  metadata: MetadataPatch.nullable()
    .optional()
    .meta({ description: 'A JSON Merge Patch (RFC 7396) onto the stored metadata: a key set to null is removed, null clears all. At most 20 keys result.' }),
});
export type ItemPatch = z.infer<typeof ItemPatch>;

/** The body of POST /items: the patch fields, sku and name required; metadata is a merge patch onto `{}`. */
export const NewItem = ItemPatch.extend({ sku: Sku, name: ItemName });
export type NewItem = z.infer<typeof NewItem>;

const QUANTITY_MESSAGE = 'cannot be set here: change stock with POST /items/{id}/stock-adjustments';

export type ParsedFields<T> = { ok: true; value: T; errors: FieldErrors } | { ok: false; value: Partial<T>; errors: FieldErrors };

/**
 * Parses a body object and, when it fails, keeps the fields that are valid on their own, so that
 * checks needing the database (a location of the workspace, the merged metadata) can still run
 * and one 400 lists every problem.
 */
export function parseFields<S extends z.ZodObject>(schema: S, body: Record<string, unknown>): ParsedFields<z.output<S>> {
  const result = schema.safeParse(body);
  const errors = new FieldErrors();
  if (result.success) return { ok: true, value: result.data, errors };
  const invalid = new Set<string>();
  for (const error of zodFieldErrors(result.error, 'body', body)) {
    invalid.add(error.field.split('.')[0]!);
    errors.add(error.field === 'quantity' && error.code === 'unknown_field' ? { ...error, message: QUANTITY_MESSAGE } : error);
  }
  const value: Record<string, unknown> = {};
  const shape: Record<string, z.ZodType> = schema.shape;
  for (const [key, field] of Object.entries(shape)) {
    if (invalid.has(key) || !Object.hasOwn(body, key)) continue;
    const parsed = field.safeParse(body[key]);
    if (parsed.success) value[key] = parsed.data;
  }
  return { ok: false, value: value as Partial<z.output<S>>, errors };
}

/** RFC 7396 onto a flat string map: a string sets a key, null removes it, `null` as the whole patch clears all. */
export function mergeMetadata(stored: Metadata, patch: MetadataPatch | null): Metadata {
  if (patch === null) return {};
  // A Map, not property assignment: a key such as "__proto__" must stay an ordinary key.
  const merged = new Map(Object.entries(stored));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else merged.set(key, value);
  }
  return Object.fromEntries(merged);
}

/** Problems of a metadata object as it would be stored. */
export function metadataErrors(metadata: Metadata): FieldError[] {
  const count = Object.keys(metadata).length;
  if (count <= METADATA_MAX_KEYS) return [];
  return [
    {
      in: 'body',
      field: 'metadata',
      code: 'too_many_keys',
      message: `must have at most ${METADATA_MAX_KEYS} keys after the merge (would have ${count})`,
    },
  ];
}

function sameMetadata(a: Metadata, b: Metadata): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

/** The master data of an item, as stored. */
export interface ItemFields {
  sku: string;
  name: string;
  category: string | null;
  minStock: number | null;
  locationId: string | null;
  metadata: Metadata;
}

/** What a patch changes: only fields whose value differs from the stored one. */
export function itemChanges(current: ItemFields, patch: Partial<ItemPatch>): Partial<ItemFields> {
  const changes: Partial<ItemFields> = {};
  if (patch.sku !== undefined && patch.sku !== current.sku) changes.sku = patch.sku;
  if (patch.name !== undefined && patch.name !== current.name) changes.name = patch.name;
  if (patch.category !== undefined && patch.category !== current.category) changes.category = patch.category;
  if (patch.min_stock !== undefined && patch.min_stock !== current.minStock) changes.minStock = patch.min_stock;
  if (patch.location_id !== undefined && patch.location_id !== current.locationId) changes.locationId = patch.location_id;
  if (patch.metadata !== undefined) {
    const merged = mergeMetadata(current.metadata, patch.metadata);
    if (!sameMetadata(merged, current.metadata)) changes.metadata = merged;
  }
  return changes;
}

/** `If-Match`: `*` or a list of entity tags (RFC 9110); only strong tags can match. */
export type IfMatch = '*' | string[];

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e]*)"$/;

/** Parses an If-Match value; undefined when it is not a valid header value. */
export function parseIfMatch(value: string): IfMatch | undefined {
  const trimmed = value.trim();
  if (trimmed === '*') return '*';
  const strong: string[] = [];
  for (const part of trimmed.split(',')) {
    const match = ENTITY_TAG.exec(part.trim());
    if (!match) return undefined;
    if (!match[1]) strong.push(match[2]!);
  }
  return strong;
}

/** An item's ETag: its version, quoted. */
export function itemEtag(version: number): string {
  return `"${version}"`;
}

export function ifMatchAccepts(condition: IfMatch, version: number): boolean {
  return condition === '*' || condition.includes(String(version));
}

/** True when a stock change takes the quantity from at or above `min_stock` to below it (`item.reorder_needed`). */
export function crossesBelowMinStock(minStock: number | null, before: number, after: number): boolean {
  return minStock !== null && before >= minStock && after < minStock;
}
