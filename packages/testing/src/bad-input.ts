/**
 * Bad-input requests for every route of a service, found from the contract route table and the
 * service's OpenAPI document, so that a new route or field is attacked without anyone adding it:
 * NUL, lone surrogates (in JSON and as percent-escapes), escapes that decode to no UTF-8,
 * timestamps outside the years 0001-9999, forged cursors, `__proto__` keys, very long strings,
 * deep nesting. `judgeBadInputAnswer` says whether an answer to one of them is right.
 */
import { randomUUID } from 'node:crypto';
import { ROUTES, parseRouteKey, type ServiceName } from '@platform/core';

type Json = Record<string, unknown>;

/** The parts of an OpenAPI 3.1 document the generator reads. */
export interface OpenApiLike {
  paths: Record<string, Record<string, { parameters?: Json[]; requestBody?: Json } | undefined>>;
  components?: { schemas?: Record<string, Json>; parameters?: Record<string, Json> };
}

/** Where an answer must show the refusal of a request the platform may not accept. */
export interface Refusal {
  in: 'body' | 'path' | 'query';
  /** The dotted field of the refusal; absent when any field of `in` will do (a bad key is shown escaped). */
  field?: string;
  /** For a bulk route: the entry whose result must be the 400 (the request itself answers 200). */
  entry?: number;
}

/** One request of the walk. */
export interface BadInputRequest {
  /** The contract route key it attacks, e.g. `PATCH /items/:id`. */
  route: string;
  method: string;
  /** Path and query relative to the service root (through the gateway, put `SERVICES[service].prefix` before it), escapes exactly as they go on the wire. */
  path: string;
  /** The raw JSON body; lone surrogates and NUL appear as `\uXXXX` escapes. */
  body?: string;
  /** What the request tries, for failure messages. */
  label: string;
  /** Set when the input must be refused (400); otherwise any answer but a 5xx is right. */
  refuse?: Refusal;
}

export interface BadInputOptions {
  /** A path param's value for a route (a real id reaches deeper); default: a fresh UUID. */
  params?: (route: string, name: string) => string | undefined;
  /** Bulk routes: the top-level body array whose entries are judged one by one, e.g. `{ 'POST /items/bulk': 'items' }`. */
  entries?: Record<string, string>;
}

/** Strings that break the string rule (contract section 2), as they go into JSON. */
export const BAD_STRINGS: Readonly<Record<string, string>> = {
  NUL: 'a\u0000b',
  'lone high surrogate': '\ud800',
  'lone low surrogate': 'x\udc00',
  'reversed surrogate pair': '\udc00\ud800',
};

/** Percent-escapes that decode to no such string: NUL, overlong and invalid UTF-8, an encoded surrogate, no hex. */
export const BAD_ESCAPES: readonly string[] = ['%00', 'a%00b', '%C0', '%C0%80', '%FF', '%ED%A0%80', '%F4%90%80%80', '%E2%82', '%ZZ', '%'];

/** RFC 3339 timestamps outside the UTC years 0001-9999 (contract section 2). */
export const BAD_TIMESTAMPS: readonly string[] = [
  '0000-12-31T23:59:59Z',
  '0000-01-01T00:00:00.000Z',
  '0001-01-01T00:30:00+01:00',
  '9999-12-31T23:00:00-02:00',
  '10000-01-01T00:00:00Z',
  '+010000-01-01T00:00:00.000Z',
];

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const SOME_UUID = '0b7e0c2a-93a4-4a5e-8a55-1f0c2a7d9e11';

/** `?cursor=` values the platform never issued: impossible dates, a bad id, wrong shapes. */
export const FORGED_CURSORS: Readonly<Record<string, string>> = {
  'year 0': cursorOf(['0000-01-01T00:00:00.000Z', SOME_UUID]),
  'year 10000': cursorOf(['+010000-01-01T00:00:00.000Z', SOME_UUID]),
  'NaN date': cursorOf(['NaN', SOME_UUID]),
  'numeric date': cursorOf([8.64e15 + 1, SOME_UUID]),
  'id not a UUID': cursorOf(['2024-12-01T09:30:00.000Z', "x' OR 1=1 --"]),
  'extra element': cursorOf(['2024-12-01T09:30:00.000Z', SOME_UUID, 1]),
  'object instead of array': cursorOf({ createdAt: '2024-12-01T09:30:00.000Z', id: SOME_UUID }),
  'null elements': cursorOf([null, null]),
  'not base64 JSON': 'not-a-cursor',
};

const VERY_LONG = 'é'.repeat(100_000);
const DEEP = 20_000;

interface FieldSpec {
  path: string[];
  kind: 'string' | 'timestamp' | 'map';
  /** Values other fields must have for this one to count (a oneOf branch's `connector`). */
  requires: { path: string[]; value: unknown }[];
}

function resolve(document: OpenApiLike, schema: Json | undefined, seen: Set<string>): Json | undefined {
  let current = schema;
  while (current && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (seen.has(ref)) return undefined;
    seen = new Set(seen).add(ref);
    const name = ref.split('/').pop()!;
    current = ref.startsWith('#/components/schemas/')
      ? document.components?.schemas?.[name]
      : ref.startsWith('#/components/parameters/')
        ? document.components?.parameters?.[name]
        : undefined;
  }
  return current;
}

function typesOf(schema: Json): string[] {
  return Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
}

/** Every string, timestamp and map a body schema has, at any depth, each branch of a oneOf/anyOf included. */
function bodyFields(document: OpenApiLike, root: Json | undefined): FieldSpec[] {
  const found = new Map<string, FieldSpec>();
  const visit = (raw: Json | undefined, path: string[], requires: FieldSpec['requires'], seen: Set<string>, depth: number): void => {
    const schema = resolve(document, raw, seen);
    if (!schema || depth > 12) return;
    const add = (kind: FieldSpec['kind']) => {
      const key = `${kind}:${path.join('.')}`;
      if (!found.has(key) && path.length > 0) found.set(key, { path, kind, requires });
    };
    for (const keyword of ['oneOf', 'anyOf', 'allOf'] as const) {
      for (const branch of (schema[keyword] as Json[] | undefined) ?? []) {
        const resolved = resolve(document, branch, seen);
        const consts = Object.entries((resolved?.properties as Record<string, Json> | undefined) ?? {})
          .filter(([, property]) => 'const' in property)
          .map(([name, property]) => ({ path: [...path, name], value: property.const }));
        visit(branch, path, [...requires, ...consts], seen, depth + 1);
      }
    }
    const types = typesOf(schema);
    if (types.includes('string')) add(schema.format === 'date-time' ? 'timestamp' : 'string');
    if (types.includes('object') || schema.properties || schema.additionalProperties) {
      for (const [name, property] of Object.entries((schema.properties as Record<string, Json> | undefined) ?? {})) {
        visit(property, [...path, name], requires, seen, depth + 1);
      }
      const values = schema.additionalProperties;
      if (values && typeof values === 'object') {
        add('map');
        visit(values as Json, [...path, 'key'], requires, seen, depth + 1);
      }
    }
    if (types.includes('array') && schema.items && typeof schema.items === 'object') visit(schema.items as Json, [...path, '0'], requires, seen, depth + 1);
  };
  visit(root, [], [], new Set(), 0);
  return [...found.values()];
}

function setAt(target: Json, path: readonly string[], value: unknown): void {
  let node: Record<string, unknown> | unknown[] = target;
  for (const [i, key] of path.entries()) {
    const last = i === path.length - 1;
    if (last) {
      Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
      return;
    }
    let next = node[key];
    if (next === null || typeof next !== 'object') {
      next = /^\d+$/.test(path[i + 1]!) ? [] : {};
      Object.defineProperty(node, key, { value: next, enumerable: true, writable: true, configurable: true });
    }
    node = next as Record<string, unknown>;
  }
}

/** An object whose own keys are exactly these, `__proto__` included. */
function objectOf(entries: [string, unknown][]): Json {
  const out: Json = {};
  for (const [key, value] of entries) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * The bad-input requests for every route of `service` in the contract route table (`ROUTES`),
 * with path params, query params and body fields (at any depth, maps and oneOf branches
 * included) taken from the service's OpenAPI `document`. Every route gets at least one request.
 */
export function badInputRequests(service: ServiceName, document: OpenApiLike, options: BadInputOptions = {}): BadInputRequest[] {
  const out: BadInputRequest[] = [];
  for (const route of Object.keys(ROUTES[service])) {
    const { method, path: expressPath } = parseRouteKey(route);
    const openApiPath = expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
    const operation = document.paths[openApiPath]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${route} of ${service} is not in its OpenAPI document`);
    const parameters = (operation.parameters ?? []).map((p) => resolve(document, p, new Set())).filter((p): p is Json => Boolean(p));
    const queryNames = parameters.filter((p) => p.in === 'query').map((p) => String(p.name));
    const paramNames = [...expressPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
    const values = new Map(paramNames.map((name) => [name, options.params?.(route, name) ?? randomUUID()]));
    const pathWith = (name?: string, raw?: string) =>
      expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_all, param: string) => (param === name ? raw! : values.get(param)!));
    const add = (label: string, path: string, refuse?: Refusal, body?: string) =>
      out.push({ route, method, path, label: `${route}: ${label}`, ...(body === undefined ? {} : { body }), ...(refuse ? { refuse } : {}) });

    for (const name of paramNames) {
      for (const escape of BAD_ESCAPES) add(`path ${name}=${escape}`, pathWith(name, escape), { in: 'path', field: name });
      add(`path ${name} of 5,000 characters`, pathWith(name, 'a'.repeat(5_000)));
    }

    const base = pathWith();
    // Every route refuses a query that does not decode, whether or not it takes one: no route goes uncovered.
    for (const escape of ['%C0', '%00', '%ED%A0%80']) add(`unknown query param x=${escape}`, `${base}?x=${escape}`, { in: 'query', field: 'x' });
    add('query name %FF', `${base}?%FF=1`, { in: 'query' });
    for (const name of queryNames) {
      for (const escape of BAD_ESCAPES) add(`query ${name}=${escape}`, `${base}?${name}=${escape}`, { in: 'query', field: name });
      add(`query ${name} of 4,000 characters`, `${base}?${name}=${'q'.repeat(4_000)}`);
      if (name === 'cursor')
        for (const [what, cursor] of Object.entries(FORGED_CURSORS))
          add(`forged cursor (${what})`, `${base}?cursor=${cursor}`, { in: 'query', field: 'cursor' });
    }

    if (!operation.requestBody) continue;
    const media = (operation.requestBody.content as Record<string, Json> | undefined)?.['application/json'];
    const example = media?.example && typeof media.example === 'object' ? (media.example as Json) : {};
    const entriesField = options.entries?.[route];
    const refusal = (path: string[], field: string | undefined): Refusal => {
      if (entriesField && path[0] === entriesField && path.length > 2 && /^\d+$/.test(path[1]!)) {
        return { in: 'body', entry: Number(path[1]), ...(field === undefined ? {} : { field: field.split('.').slice(2).join('.') }) };
      }
      return { in: 'body', ...(field === undefined ? {} : { field }) };
    };
    const mutate = (label: string, path: string[], value: unknown, requires: FieldSpec['requires'], refuse: Refusal | undefined) => {
      const body = structuredClone(example);
      for (const requirement of requires) setAt(body, requirement.path, requirement.value);
      if (path.length === 0) Object.assign(body, value);
      else setAt(body, path, value);
      add(label, base, refuse, JSON.stringify(body));
    };

    for (const field of bodyFields(document, media?.schema as Json | undefined)) {
      const dotted = field.path.join('.');
      if (field.kind === 'map') {
        for (const [what, bad] of Object.entries(BAD_STRINGS)) {
          mutate(`${what} in a key of ${dotted}`, field.path, objectOf([[`k${bad}`, 'v']]), field.requires, refusal(field.path, undefined));
          mutate(`${what} in a value of ${dotted}`, field.path, objectOf([['k', bad]]), field.requires, refusal([...field.path, 'k'], `${dotted}.k`));
        }
        mutate(
          `__proto__ and constructor keys in ${dotted}`,
          field.path,
          objectOf([
            ['__proto__', 'x'],
            ['constructor', 'y'],
          ]),
          field.requires,
          undefined,
        );
        continue;
      }
      for (const [what, bad] of Object.entries(BAD_STRINGS)) mutate(`${what} in ${dotted}`, field.path, bad, field.requires, refusal(field.path, dotted));
      mutate(`${dotted} of 100,000 characters`, field.path, VERY_LONG, field.requires, undefined);
      if (field.kind === 'timestamp') for (const at of BAD_TIMESTAMPS) mutate(`${dotted} = ${at}`, field.path, at, field.requires, refusal(field.path, dotted));
    }
    for (const [what, bad] of Object.entries(BAD_STRINGS)) {
      add(`${what} in an unknown body key`, base, { in: 'body' }, JSON.stringify(objectOf([...Object.entries(example), [`u${bad}`, 1]])));
    }
    add('__proto__ as a body key', base, undefined, JSON.stringify(objectOf([...Object.entries(example), ['__proto__', { quantity: 5 }]])));
    add(
      `a body field nested ${DEEP} deep`,
      base,
      undefined,
      JSON.stringify(example)
        .replace(/^\{/, `{"deep":${'['.repeat(DEEP)}"\\u0000"${']'.repeat(DEEP)},`)
        .replace(/,\}$/, '}'),
    );
  }
  return out;
}

/** The contract routes `requests` attack, to compare with `Object.keys(ROUTES[service])`. */
export function routesCovered(requests: readonly BadInputRequest[]): string[] {
  return [...new Set(requests.map((r) => r.route))].sort();
}

function errorBodyProblems(body: unknown): string[] {
  const error = (body as { error?: Json } | null)?.error;
  if (!error || typeof error !== 'object') return ['no error body'];
  const problems: string[] = [];
  if (typeof error.code !== 'string' || typeof error.message !== 'string' || typeof error.request_id !== 'string')
    problems.push('error lacks code, message or request_id');
  const errors = error.errors;
  if (errors !== undefined) {
    if (!Array.isArray(errors) || errors.length > 100) problems.push('errors[] is not an array of at most 100');
    else if (
      !errors.every(
        (e: Json) =>
          ['body', 'path', 'query', 'header'].includes(String(e.in)) &&
          typeof e.field === 'string' &&
          typeof e.code === 'string' &&
          typeof e.message === 'string',
      )
    ) {
      problems.push('an errors[] element is not { in, field, code, message }');
    }
    if ('errors_total' in error && !(typeof error.errors_total === 'number' && Array.isArray(errors) && error.errors_total > errors.length))
      problems.push('errors_total without more problems than errors[] lists');
  }
  return problems;
}

function showsRefusal(error: Json | undefined, refuse: Refusal): boolean {
  const errors = (error?.errors as Json[] | undefined) ?? [];
  return error?.code === 'invalid_request' && errors.some((e) => e.in === refuse.in && (refuse.field === undefined || e.field === refuse.field));
}

/**
 * What is wrong with an answer to a bad-input request (empty: nothing): a 5xx, an error answer
 * without the contract error body, or, when the request must be refused, anything but a 400
 * naming the refused field (for a bulk entry: that entry's result).
 */
export function judgeBadInputAnswer(request: BadInputRequest, answer: { status: number; body: unknown }): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}`);
  if (answer.status >= 400) problems.push(...errorBodyProblems(answer.body));
  const refuse = request.refuse;
  if (refuse && refuse.entry !== undefined) {
    const result = (answer.body as { results?: { status: number; error?: Json }[] } | null)?.results?.[refuse.entry];
    if (answer.status !== 200 || !result) problems.push(`expected 200 with a result for entry ${refuse.entry}, got ${answer.status}`);
    else if (result.status !== 400 || !showsRefusal(result.error, { in: refuse.in, field: refuse.field }))
      problems.push(`entry ${refuse.entry} was not refused: ${JSON.stringify(result).slice(0, 300)}`);
  } else if (refuse) {
    if (answer.status !== 400) problems.push(`expected 400, got ${answer.status}`);
    else if (!showsRefusal((answer.body as { error?: Json }).error, refuse)) {
      problems.push(`no errors[] element at ${refuse.in} ${refuse.field ?? '(any field)'}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    }
  }
  return problems;
}

/**
 * Sends every request (`concurrency` at a time) and judges each answer; returns one line per
 * wrong answer, so a test can expect `[]` and show every failure at once.
 */
export async function runBadInput(
  requests: readonly BadInputRequest[],
  send: (request: BadInputRequest) => Promise<{ status: number; body: unknown }>,
  concurrency = 16,
): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < requests.length) {
      const request = requests[next++]!;
      const problems = judgeBadInputAnswer(request, await send(request));
      if (problems.length > 0) failures.push(`${request.label} (${request.method} ${request.path.slice(0, 120)}): ${problems.join('; ')}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, worker));
  return failures;
}
