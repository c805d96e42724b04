import { Router, type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import { z } from 'zod';
import { FieldErrors, forbiddenScope, invalidRequest, unauthorized, type FieldError } from './errors';
import type { Identity } from './http';
import { ROUTES, parseRouteKey, type RoutesOf, type Scope, type ServiceName } from '../contract';
import type { RouteDocs } from '../openapi/route-docs';
import { rawQueryErrors, strictDecode, TEXT_RULE_MESSAGE, textRuleErrors, zodFieldErrors } from './validation';

/** What a handler returns; the route builder sends it as JSON. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteSchemas {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  headers?: z.ZodType;
  /**
   * Top-level body arrays whose elements the handler judges each on its own (bulk entries): the
   * string rule is not applied inside them here, so one bad entry does not refuse the others.
   */
  entries?: readonly string[];
}

/**
 * A route without its handler: what it takes (params, query, body, headers) and its reference
 * documentation. Services declare their routes as data; `route()` wires a declaration to a
 * handler, and the OpenAPI document is built from the declarations alone.
 */
export type RouteDeclaration = RouteSchemas & { docs?: RouteDocs };

type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What a handler receives: the parsed request and its caller (a service route: the key's identity). */
export interface RouteInput<S extends RouteSchemas, Caller = Identity> {
  params: Parsed<S['params']>;
  query: Parsed<S['query']>;
  body: Parsed<S['body']>;
  headers: Parsed<S['headers']>;
  identity: Caller;
  requestId: string;
}

/** A validated route: its schemas, its reference documentation and a handler that receives typed input and knows nothing of HTTP. */
export interface RouteDefinition<Caller = Identity> {
  schemas: RouteSchemas;
  /** What the API reference says about the route (openapi.ts); every contract route has it, a test per service checks. */
  docs?: RouteDocs;
  handle(input: RouteInput<RouteSchemas, Caller>): Promise<Reply> | Reply;
}

/**
 * Declares a route's params, query, body and headers; all are validated before the handler runs,
 * every problem reported at once. `docs` documents the route from these same schemas.
 */
export function route<S extends RouteSchemas, Caller = Identity>(
  spec: S & { docs?: RouteDocs },
  handle: (input: RouteInput<S, Caller>) => Promise<Reply> | Reply,
): RouteDefinition<Caller> {
  const { docs, ...schemas } = spec;
  return { schemas, docs, handle };
}

function problemKey(error: FieldError): string {
  return `${error.in}\u0000${error.field}\u0000${error.code}`;
}

function parsePart(schema: z.ZodType | undefined, value: unknown, location: FieldError['in'], errors: FieldErrors, reported: Set<string>): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // A string the walk refused is one problem, not a second one for the schema's own format.
  for (const error of zodFieldErrors(result.error, location, value)) if (!reported.has(problemKey(error))) errors.add(error);
  return undefined;
}

/** The parts of a request as its schemas parse them. */
export type ParsedRequest<S extends RouteSchemas> = Pick<RouteInput<S>, 'params' | 'query' | 'body' | 'headers'>;

/**
 * Validates a request before any handler sees it: first the string rule on everything the
 * client sent (the raw query string, the decoded path params, every string and key of the body),
 * then the schemas. Every problem is reported in one 400 (the first 100, with their number).
 */
export function parseRequest<S extends RouteSchemas>(schemas: S, req: Request): ParsedRequest<S> {
  const errors = new FieldErrors();
  const reported = new Set<string>();
  const note = (found: Iterable<FieldError>): void => {
    for (const error of found) {
      errors.add(error);
      if (reported.size < 1000) reported.add(problemKey(error));
    }
  };
  const queryAt = req.originalUrl.indexOf('?');
  note(rawQueryErrors(queryAt === -1 ? '' : req.originalUrl.slice(queryAt + 1)));
  note(textRuleErrors(req.params, 'path'));
  note(textRuleErrors(req.body ?? {}, 'body', { opaque: schemas.entries }));
  const parsed = {
    params: parsePart(schemas.params, req.params, 'path', errors, reported),
    query: parsePart(schemas.query, req.query, 'query', errors, reported),
    headers: parsePart(schemas.headers, req.headers, 'header', errors, reported),
    body: parsePart(schemas.body, req.body ?? {}, 'body', errors, reported),
  };
  if (errors.total > 0) throw invalidRequest(errors);
  return parsed as ParsedRequest<S>;
}

function segmentsOf(path: string): string[] {
  return path.split('/').slice(1);
}

/**
 * Turns the router's failure to percent-decode a path param (`/items/%C0`, a lone surrogate as
 * `%ED%A0%80`) into the contract's 400 at that param, instead of a 500. `paths` are the router's
 * route paths, which name the param.
 */
export function pathEscapeErrors(paths: readonly string[]): ErrorRequestHandler {
  const patterns = paths.map(segmentsOf);
  return (err: unknown, req, _res, next) => {
    if (!(err instanceof URIError)) return next(err);
    const rawPath = req.originalUrl.split('?')[0]!.slice(req.baseUrl.length);
    const segments = segmentsOf(rawPath);
    if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
    const bad = segments.findIndex((segment) => strictDecode(segment.replace(/\+/g, '%2B')) === undefined);
    if (bad === -1) return next(err);
    // The route whose literal segments are the request's: several routes may have a param at this depth.
    const pattern = patterns.find(
      (p) => p.length === segments.length && p[bad]?.startsWith(':') && p.every((part, i) => part.startsWith(':') || part === segments[i]),
    );
    const field = pattern ? pattern[bad]!.slice(1) : '';
    next(invalidRequest([{ in: 'path', field, code: 'invalid_format', message: `${TEXT_RULE_MESSAGE} (as UTF-8, percent-encoded)` }]));
  };
}

/** Who may call a route of a table (throws the contract's 401 or 403 otherwise), and what its handler learns of the caller. */
export type Admit<Spec, Caller> = (req: Request, spec: Spec) => Caller;

/** A service route's caller: the identity the gateway signed, holding the scope the route's spec names. */
export function admitByScope(req: Request, spec: { scope: Scope }): Identity {
  const identity = req.identity;
  if (!identity) throw unauthorized('Request was not signed by the gateway.');
  if (identity.scopes !== null && !identity.scopes.includes(spec.scope)) throw forbiddenScope(spec.scope);
  return identity;
}

function toHandler<Spec, Caller>(spec: Spec, definition: RouteDefinition<Caller>, admit: Admit<Spec, Caller>): RequestHandler {
  return async (req: Request, res) => {
    const identity = admit(req, spec);
    const input = { ...parseRequest(definition.schemas, req), identity, requestId: req.requestId };
    const reply = await definition.handle(input);
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.body === undefined) res.status(reply.status).end();
    else res.status(reply.status).json(reply.body);
  };
}

/**
 * Mounts the definitions of a route table on a router, each admitted by `admit` with its spec
 * from the table; a path param that does not decode is a 400.
 */
export function mountRouteTable<Spec, Caller>(
  router: Router,
  specs: Readonly<Record<string, Spec>>,
  definitions: Record<string, RouteDefinition<Caller>>,
  admit: Admit<Spec, Caller>,
): Router {
  const paths: string[] = [];
  for (const [key, definition] of Object.entries(definitions)) {
    const spec = specs[key];
    if (!spec) throw new Error(`${key} is not in the route table`);
    const { method, path } = parseRouteKey(key);
    paths.push(path);
    router[method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete'](path, toHandler(spec, definition, admit));
  }
  router.use(pathEscapeErrors(paths));
  return router;
}

/** Mounts route definitions on a router, each checking the scope its spec names; a path param that does not decode is a 400. */
export function mountRoutes(router: Router, specs: Readonly<Record<string, { scope: Scope }>>, definitions: Record<string, RouteDefinition>): Router {
  return mountRouteTable(router, specs, definitions, admitByScope);
}

/**
 * A router with exactly the contract's routes of one service; the type demands a definition
 * for every route, and each route checks the scope the contract names.
 */
export function contractRouter<S extends ServiceName>(service: S, definitions: Record<RoutesOf<S>, RouteDefinition>): Router {
  return mountRoutes(Router(), ROUTES[service], definitions);
}
