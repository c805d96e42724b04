import type { z } from 'zod';
import type { ResponseDoc, RouteDocs } from '../openapi/route-docs';
import type { RouteDeclaration } from './route';

export interface ResourceOptions<P extends z.ZodType> {
  /** Singular, lower case, as the reference says it: `pipeline`, `webhook endpoint`. */
  name: string;
  /** The path params that name one (`{ id }`). */
  params: P;
  /** One as the API answers it (an output schema). */
  schema: z.ZodType;
  /** What 404 means on its routes; default: no `<name>` with this id in the workspace. */
  notFound?: string;
  /** Its group in the reference; default: the path's first segment. */
  tag?: string;
}

/** The routes on one resource named by its path params. */
export interface Resource<P extends z.ZodType> {
  /** A route on it: the resource's `params`, and in its docs the resource's 404 and tag unless the route names its own. */
  route<D extends Omit<RouteDeclaration, 'params'>>(declaration: D): Omit<D, 'docs'> & { params: P; docs?: RouteDocs };
  /** `GET` of one: operationId `get<Name>`, "Retrieve a <name>", 200 with it (and these headers). */
  retrieve(headers?: ResponseDoc['headers']): { params: P; docs: RouteDocs };
}

const pascalCase = (words: string) => words.replace(/(^|\s)(\w)/g, (_all, _space: string, letter: string) => letter.toUpperCase());
const withArticle = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;

/** Declares the routes on one resource once with what they share: its params, its 404, its tag, its retrieval. */
export function resource<P extends z.ZodType>(options: ResourceOptions<P>): Resource<P> {
  const { name, params, schema, tag } = options;
  const notFound = options.notFound ?? `No ${name} with this id in the workspace.`;
  const onResource = (docs: RouteDocs): RouteDocs => ({ ...(tag && { tag }), ...docs, errors: { 404: notFound, ...docs.errors } });
  return {
    route: ({ docs, ...schemas }) => ({ ...schemas, params, ...(docs && { docs: onResource(docs) }) }),
    retrieve: (headers) => ({
      params,
      docs: onResource({
        operationId: `get${pascalCase(name)}`,
        summary: `Retrieve ${withArticle(name)}`,
        responses: { 200: { description: `The ${name}.`, schema, ...(headers && { headers }) } },
      }),
    }),
  };
}
