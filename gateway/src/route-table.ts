import { parseRouteKey, ROUTES, SERVICES, type BucketName, type Scope, type ServiceName } from '@platform/core';

export interface MatchedRoute {
  /** The contract's route key, e.g. `POST /tickets/:id/validate`. */
  key: string;
  scope: Scope;
  bucket: BucketName;
}

export interface ServiceMatch {
  service: ServiceName;
  prefix: string;
  /** Path and query as the service sees them: `/events/v0/tickets/x?y=1` → `/tickets/x?y=1`. */
  forwardPath: string;
  /** The service's general bucket, where an unknown route is counted. */
  generalBucket: BucketName;
  /** null: no contract route (404). */
  route: MatchedRoute | null;
}

interface Node {
  literal: Map<string, Node>;
  param: Node | undefined;
  route: MatchedRoute | undefined;
}

const newNode = (): Node => ({ literal: new Map(), param: undefined, route: undefined });

interface CompiledService {
  service: ServiceName;
  prefix: string;
  generalBucket: BucketName;
  byMethod: Map<string, Node>;
}

function matchSegments(node: Node, segments: string[], index: number): MatchedRoute | undefined {
  if (index === segments.length) return node.route;
  const segment = segments[index]!;
  if (segment === '') return undefined;
  const literal = node.literal.get(segment);
  if (literal) {
    const found = matchSegments(literal, segments, index + 1);
    if (found) return found;
  }
  return node.param ? matchSegments(node.param, segments, index + 1) : undefined;
}

/**
 * The contract's route table (`ROUTES`, `SERVICES` in @platform/core) compiled once into one
 * segment tree per service and method. Only these routes are proxied; a service's own
 * /healthz, /readyz and /metrics are not among them.
 */
export class RouteTable {
  private readonly services: CompiledService[];

  constructor(routes: typeof ROUTES = ROUTES, services: typeof SERVICES = SERVICES) {
    this.services = (Object.keys(services) as ServiceName[]).map((service) => {
      const { prefix, bucket } = services[service];
      const byMethod = new Map<string, Node>();
      for (const [key, spec] of Object.entries(routes[service]) as [string, { scope: Scope; bucket?: BucketName }][]) {
        const { method, path } = parseRouteKey(key);
        let node = byMethod.get(method);
        if (!node) byMethod.set(method, (node = newNode()));
        for (const segment of path.split('/').slice(1)) {
          if (segment.startsWith(':')) node = node.param ??= newNode();
          else {
            let next = node.literal.get(segment);
            if (!next) node.literal.set(segment, (next = newNode()));
            node = next;
          }
        }
        node.route = { key, scope: spec.scope, bucket: spec.bucket ?? bucket };
      }
      return { service, prefix, generalBucket: bucket, byMethod };
    });
  }

  /** The service a request URL belongs to and its contract route; undefined outside every service prefix. */
  match(method: string, url: string): ServiceMatch | undefined {
    const queryAt = url.indexOf('?');
    const pathname = queryAt === -1 ? url : url.slice(0, queryAt);
    for (const compiled of this.services) {
      const { prefix } = compiled;
      if (!pathname.startsWith(prefix) || (pathname.length > prefix.length && pathname.charCodeAt(prefix.length) !== 47) /* / */) continue;
      const rest = pathname.length === prefix.length ? '/' : pathname.slice(prefix.length);
      const forwardPath = queryAt === -1 ? rest : rest + url.slice(queryAt);
      const segments = rest.split('/');
      segments.shift();
      // One trailing slash is ignored, as Express (non-strict routing) does in the services.
      if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
      // HEAD is answered on every GET route (contract section 2), with the GET route's scope and bucket.
      const root = compiled.byMethod.get(method === 'HEAD' ? 'GET' : method);
      const route = root ? matchSegments(root, segments, 0) : undefined;
      return { service: compiled.service, prefix, forwardPath, generalBucket: compiled.generalBucket, route: route ?? null };
    }
    return undefined;
  }
}

function lowerCasedId(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return segment.toLowerCase();
  }
}

/**
 * A matched request's path in its canonical form (contract section 7): the service prefix and
 * the contract route with its ids lower-cased and no trailing slash, so that every spelling of
 * one resource names the same idempotency scope.
 */
export function canonicalPath(match: ServiceMatch & { route: MatchedRoute }): string {
  const queryAt = match.forwardPath.indexOf('?');
  const actual = (queryAt === -1 ? match.forwardPath : match.forwardPath.slice(0, queryAt)).split('/');
  const pattern = parseRouteKey(match.route.key).path.split('/');
  return match.prefix + pattern.map((segment, i) => (segment.startsWith(':') ? lowerCasedId(actual[i] ?? '') : segment)).join('/');
}
