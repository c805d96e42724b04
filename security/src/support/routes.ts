import { ADMIN_PREFIX, ADMIN_ROUTES, parseRouteKey, ROUTES, SERVICES, type ServiceName } from '@platform/core';

/**
 * The routes the battery walks: every route of the contract route table (`ROUTES` in
 * @platform/core, so a new route is attacked without anyone adding it here), and the admin API's
 * (`ADMIN_ROUTES`, contract section 3).
 */
export interface Route {
  service: ServiceName | 'admin';
  method: string;
  /** Express form, without the prefix: `/pipelines/:id/runs/:run_id`. */
  path: string;
  /** `/events/v0`, `/admin/v1`. */
  prefix: string;
  /** Path parameters in order of appearance. */
  params: string[];
}

function paramsOf(path: string): string[] {
  return [...path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]!);
}

export function contractRoutes(): Route[] {
  const routes: Route[] = [];
  for (const service of Object.keys(ROUTES) as ServiceName[]) {
    for (const key of Object.keys(ROUTES[service])) {
      const { method, path } = parseRouteKey(key);
      routes.push({ service, method, path, prefix: SERVICES[service].prefix, params: paramsOf(path) });
    }
  }
  return routes;
}

export function adminRoutes(): Route[] {
  return Object.keys(ADMIN_ROUTES).map((key) => {
    const { method, path } = parseRouteKey(key);
    return { service: 'admin', method, path, prefix: ADMIN_PREFIX, params: paramsOf(path) };
  });
}

export function routeName(route: Route): string {
  return `${route.method} ${route.prefix}${route.path}`;
}

/**
 * Where the value of a path parameter comes from: the collection named by the path segment
 * before it, within the route's service (`/pipelines/:id/runs/:run_id`: `pipelines:pipelines`,
 * then `pipelines:runs`).
 */
export function idSourcesOf(route: Route): string[] {
  const segments = route.path.split('/');
  return segments.flatMap((segment, i) => (segment.startsWith(':') ? [`${route.service}:${segments[i - 1]}`] : []));
}

/** The path with each parameter replaced by the value given for it, in order. */
export function fillPath(route: Route, values: readonly string[]): string {
  let i = 0;
  return `${route.prefix}${route.path.replace(/:[a-z_]+/g, () => {
    const value = values[i++];
    if (value === undefined) throw new Error(`${routeName(route)}: no value for parameter ${i}`);
    return value;
  })}`;
}

// ---- the services' OpenAPI documents (what a client reads), for query parameters and bodies ----

type Json = Record<string, any>;

export interface OpenApiDocuments {
  documents: Record<ServiceName, Json>;
}

export interface Operation {
  queryParams: { name: string; dateTime: boolean }[];
  /** The request body schema, references resolved lazily. */
  bodySchema?: Json;
  bodyExample?: unknown;
  hasBody: boolean;
  document: Json;
}

/** The OpenAPI operation of a route, or undefined when the document does not have it. */
export function operationOf(documents: Record<ServiceName, Json>, route: Route): Operation | undefined {
  if (route.service === 'admin') return undefined;
  const document = documents[route.service];
  const openApiPath = route.path.replace(/:([a-z_]+)/g, '{$1}');
  const operation = document.paths?.[openApiPath]?.[route.method.toLowerCase()] as Json | undefined;
  if (!operation) return undefined;
  const parameters = ((operation.parameters ?? []) as Json[]).map((p) => resolve(document, p));
  const media = operation.requestBody ? resolve(document, operation.requestBody).content?.['application/json'] : undefined;
  return {
    queryParams: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name as string, dateTime: isDateTime(document, p.schema) })),
    bodySchema: media?.schema,
    bodyExample: media?.example,
    hasBody: media !== undefined,
    document,
  };
}

export function resolve(document: Json, node: Json): Json {
  let current = node;
  for (let i = 0; current && typeof current.$ref === 'string' && i < 10; i++) {
    current = current.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((at: Json | undefined, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document) as Json;
  }
  return current;
}

function branches(document: Json, schema: Json | undefined): Json[] {
  if (!schema) return [];
  const s = resolve(document, schema);
  const alternatives = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])] as Json[];
  return alternatives.length > 0 ? alternatives.flatMap((a) => branches(document, a)) : [s];
}

function isDateTime(document: Json, schema: Json | undefined): boolean {
  return branches(document, schema).some((b) => b.format === 'date-time');
}

/** A place in a request body a value can be put: a string, a timestamp, or a map of strings (metadata). */
export interface BodyLeaf {
  path: (string | number)[];
  kind: 'string' | 'date' | 'map';
}

/** Every string, timestamp and string map a body schema declares, nested objects and first array elements included. */
export function bodyLeaves(document: Json, schema: Json | undefined, path: (string | number)[] = [], depth = 0): BodyLeaf[] {
  if (depth > 6) return [];
  const leaves: BodyLeaf[] = [];
  const seen = new Set<string>();
  const add = (leaf: BodyLeaf) => {
    const key = `${leaf.kind}:${leaf.path.join('.')}`;
    if (!seen.has(key)) {
      seen.add(key);
      leaves.push(leaf);
    }
  };
  for (const branch of branches(document, schema)) {
    if (branch.type === 'string' || (Array.isArray(branch.type) && branch.type.includes('string'))) {
      add({ path, kind: branch.format === 'date-time' ? 'date' : 'string' });
    } else if (branch.type === 'object' || branch.properties || branch.additionalProperties) {
      for (const [name, inner] of Object.entries((branch.properties ?? {}) as Json)) {
        for (const leaf of bodyLeaves(document, inner, [...path, name], depth + 1)) add(leaf);
      }
      if (branch.additionalProperties && typeof branch.additionalProperties === 'object') add({ path, kind: 'map' });
    } else if (branch.type === 'array' && branch.items) {
      for (const leaf of bodyLeaves(document, branch.items, [...path, 0], depth + 1)) add(leaf);
    }
  }
  return leaves;
}

/** A copy of `body` with `value` at `path` (objects and arrays created on the way). */
export function withValue(body: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const container: any =
    typeof head === 'number' ? (Array.isArray(body) ? [...body] : []) : body && typeof body === 'object' && !Array.isArray(body) ? { ...body } : {};
  Object.defineProperty(container, head!, { value: withValue(container[head!], rest, value), enumerable: true, writable: true, configurable: true });
  return container;
}
