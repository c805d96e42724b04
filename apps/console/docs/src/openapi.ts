// The parts of an OpenAPI 3.1 document the page reads, and how it follows `$ref`s. The gateway
// checks only that a document has an `openapi` string: every other field may be missing.

/** Anything that may be a `{ $ref }` to another part of the document. */
export interface Referable {
  $ref?: string;
}

/** The JSON Schema keywords the page shows. */
export interface Schema extends Referable {
  type?: string | string[];
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  not?: Schema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  pattern?: string;
  default?: unknown;
  examples?: unknown[];
}

export interface MediaType {
  schema?: Schema;
  example?: unknown;
}

export interface Parameter extends Referable {
  name?: string;
  in?: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

export interface Header extends Referable {
  description?: string;
  schema?: Schema;
}

export interface RequestBody extends Referable {
  required?: boolean;
  description?: string;
  content?: Record<string, MediaType>;
}

export interface Response extends Referable {
  description?: string;
  headers?: Record<string, Header>;
  content?: Record<string, MediaType>;
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: RequestBody;
  responses?: Record<string, Response>;
  /** Who may call it (`[{ bearer: ['events:read'] }]`); absent: the document's `security`. */
  security?: Record<string, string[]>[];
  'x-required-scope'?: string;
}

/** The methods the page lists, in this order within a path. */
export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];

export type PathItem = Partial<Record<Method, Operation>>;

export interface TagObject {
  name: string;
  description?: string;
}

export interface OpenApiDocument {
  openapi: string;
  info?: { title?: string; version?: string; description?: string };
  servers?: { url?: string }[];
  security?: Record<string, string[]>[];
  tags?: TagObject[];
  paths?: Record<string, PathItem>;
  webhooks?: Record<string, PathItem>;
  /** Where `$ref`s point; the page lists the schemas and shows the security scheme's description. */
  components?: {
    schemas?: Record<string, Schema>;
    securitySchemes?: Record<string, { type?: string; scheme?: string; description?: string }>;
    parameters?: Record<string, Parameter>;
    headers?: Record<string, Header>;
    responses?: Record<string, Response>;
  };
}

/** One operation of the document, where it stands. */
export interface OperationEntry {
  path: string;
  method: Method;
  operation: Operation;
}

/** Every operation, path by path in the document's order, methods in METHODS order. */
export function operationsOf(doc: OpenApiDocument): OperationEntry[] {
  const out: OperationEntry[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) out.push({ path, method, operation });
    }
  }
  return out;
}

/** `decodeURIComponent`, or the text as it is when it holds a malformed escape (`%E0`): an address or a document never stops the page. */
export function decodedOrAsIs(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The node a local JSON pointer (`#/components/schemas/Ticket`) names, or undefined. */
export function pointer(doc: OpenApiDocument, ref: unknown): unknown {
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) {
    if (node === undefined || node === null) return undefined;
    node = (node as Record<string, unknown>)[decodedOrAsIs(part).replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

/** What a value stands for once its `$ref`s are followed (at most 32, so a loop ends); `{}` when none resolves. */
export function deref<T extends Referable>(doc: OpenApiDocument, value: T | undefined): T {
  let node: T | undefined = value;
  for (let guard = 0; node?.$ref && guard < 32; guard++) node = pointer(doc, node.$ref) as T | undefined;
  return node ?? ({} as T);
}

/** The last segment of a `$ref`: the component's name. */
export function refName(ref: string): string {
  return decodedOrAsIs(ref.split('/').pop() ?? ref);
}
