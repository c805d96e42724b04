import { Router, type Request, type RequestHandler } from 'express';
import { z } from 'zod';
import { forbiddenScope, invalidRequest, unauthorized, type FieldError } from './errors';
import type { Identity } from './http';
import { ROUTES, parseRouteKey, type RoutesOf, type Scope, type ServiceName } from './contract';
import type { RouteDocs } from './openapi';
import { fieldErrorsFromZod } from './validation';

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
}

type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface RouteInput<S extends RouteSchemas> {
  params: Parsed<S['params']>;
  query: Parsed<S['query']>;
  body: Parsed<S['body']>;
  headers: Parsed<S['headers']>;
  identity: Identity;
  requestId: string;
}

/** A validated route: its schemas, its reference documentation and a handler that receives typed input and knows nothing of HTTP. */
export interface RouteDefinition {
  schemas: RouteSchemas;
  /** What the API reference says about the route (openapi.ts); every contract route has it, a test per service checks. */
  docs?: RouteDocs;
  handle(input: RouteInput<RouteSchemas>): Promise<Reply> | Reply;
}

/**
 * Declares a route's params, query, body and headers; all are validated before the handler runs,
 * every problem reported at once. `docs` documents the route from these same schemas.
 */
export function route<S extends RouteSchemas>(spec: S & { docs?: RouteDocs }, handle: (input: RouteInput<S>) => Promise<Reply> | Reply): RouteDefinition {
  const { docs, ...schemas } = spec;
  return { schemas, docs, handle: handle as RouteDefinition['handle'] };
}

function parsePart(schema: z.ZodType | undefined, value: unknown, location: FieldError['in'], errors: FieldError[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  errors.push(...fieldErrorsFromZod(result.error, location, value));
  return undefined;
}

function toHandler(scope: Scope, definition: RouteDefinition): RequestHandler {
  return async (req: Request, res) => {
    const identity = req.identity;
    if (!identity) throw unauthorized('Request was not signed by the gateway.');
    if (identity.scopes !== null && !identity.scopes.includes(scope)) throw forbiddenScope(scope);
    const errors: FieldError[] = [];
    const { schemas } = definition;
    const input = {
      params: parsePart(schemas.params, req.params, 'path', errors),
      query: parsePart(schemas.query, req.query, 'query', errors),
      headers: parsePart(schemas.headers, req.headers, 'header', errors),
      body: parsePart(schemas.body, req.body ?? {}, 'body', errors),
      identity,
      requestId: req.requestId,
    };
    if (errors.length > 0) throw invalidRequest(errors);
    const reply = await definition.handle(input as RouteInput<RouteSchemas>);
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.body === undefined) res.status(reply.status).end();
    else res.status(reply.status).json(reply.body);
  };
}

/** Mounts route definitions on a router, each checking the scope its spec names. */
export function mountRoutes(router: Router, specs: Readonly<Record<string, { scope: Scope }>>, definitions: Record<string, RouteDefinition>): Router {
  for (const [key, definition] of Object.entries(definitions)) {
    const spec = specs[key];
    if (!spec) throw new Error(`${key} is not in the route table`);
    const { method, path } = parseRouteKey(key);
    router[method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete'](path, toHandler(spec.scope, definition));
  }
  return router;
}

/**
 * A router with exactly the contract's routes of one service; the type demands a definition
 * for every route, and each route checks the scope the contract names.
 */
export function contractRouter<S extends ServiceName>(service: S, definitions: Record<RoutesOf<S>, RouteDefinition>): Router {
  return mountRoutes(Router(), ROUTES[service], definitions);
}
