import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { temporarilyUnavailable } from './errors';
import { within } from '../observability/metrics';

/** A dependency's state in a readiness answer and in `platform_dependency_up`. */
export type DependencyState = 'ok' | 'down';

/**
 * What a process's /readyz looks at (contract section 12). The database decides: without it the
 * process can serve nothing. Redis only degrades it (in-memory rate limits, 503 on a trigger,
 * deliveries waiting): failing readiness on Redis would take every pod out of its Service at once
 * while they still serve, so Redis is shown, never decisive.
 */
export interface ReadinessChecks {
  /** Resolves when the process's own database answers. */
  database: () => PromiseLike<unknown>;
  /** Resolves when Redis answers; absent for a process without Redis. */
  redis?: () => PromiseLike<unknown>;
}

export interface ReadinessReport {
  /** False only when the database does not answer. */
  ready: boolean;
  checks: { database: DependencyState; redis?: DependencyState };
}

/** The body of a 200 /readyz: `{ "status": "ready", "checks": { "database": "ok", "redis": "ok" | "down" } }`. */
export interface ReadyBody {
  status: 'ready';
  checks: ReadinessReport['checks'];
}

/** How long one check may take before its dependency counts as down; two in a row stay under a 2 s probe timeout. */
export const READINESS_CHECK_TIMEOUT_MS = 900;

/** `platform_dependency_up{dependency}`: 1 when the dependency answered at scrape time, 0 when not. */
export const DEPENDENCY_UP_METRIC = 'platform_dependency_up';

const metricSources = new WeakMap<Registry, Set<Readiness>>();

/** A process's readiness: the checks, run for /readyz and at scrape time for `platform_dependency_up`. */
export class Readiness {
  private readonly timeoutMs: number;
  private readonly last: Partial<Record<keyof ReadinessChecks, DependencyState>> = {};

  constructor(
    private readonly checks: ReadinessChecks,
    private readonly options: { registry?: Registry; logger?: Logger; timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? READINESS_CHECK_TIMEOUT_MS;
    if (options.registry) trackDependencies(options.registry, this);
  }

  /**
   * Runs every check, one after the other: a cold Prisma client can block the event loop longer
   * than a Redis command's timeout, which would show Redis down when it is not.
   */
  async check(): Promise<ReadinessReport> {
    const checks: ReadinessReport['checks'] = { database: await this.state('database', this.checks.database) };
    if (this.checks.redis) checks.redis = await this.state('redis', this.checks.redis);
    return { ready: checks.database === 'ok', checks };
  }

  /** The body of a 200 /readyz; throws 503 `temporarily_unavailable` when the database does not answer. */
  async require(): Promise<ReadyBody> {
    const report = await this.check();
    if (!report.ready) throw temporarilyUnavailable('Not ready: the database does not answer.');
    return { status: 'ready', checks: report.checks };
  }

  private async state(name: keyof ReadinessChecks, check: () => PromiseLike<unknown>): Promise<DependencyState> {
    let state: DependencyState = 'ok';
    let error: string | undefined;
    try {
      await within(Promise.resolve().then(check), this.timeoutMs);
    } catch (err) {
      state = 'down';
      error = err instanceof Error ? err.message : String(err);
    }
    // One line when a dependency goes down or comes back, not one per probe.
    if (this.last[name] !== state && (this.last[name] !== undefined || state === 'down')) {
      if (state === 'down') this.options.logger?.warn({ dependency: name, err: error }, `${name} does not answer`);
      else this.options.logger?.info({ dependency: name }, `${name} answers again`);
    }
    this.last[name] = state;
    return state;
  }
}

function trackDependencies(registry: Registry, readiness: Readiness): void {
  let sources = metricSources.get(registry);
  if (!sources) {
    const tracked = new Set<Readiness>();
    sources = tracked;
    metricSources.set(registry, tracked);
    new Gauge({
      name: DEPENDENCY_UP_METRIC,
      help: '1 when the dependency answered at scrape time, else 0 (the database decides readiness; Redis down only degrades).',
      labelNames: ['dependency'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const source of tracked) {
          const { checks } = await source.check();
          for (const [dependency, state] of Object.entries(checks)) this.set({ dependency }, state === 'ok' ? 1 : 0);
        }
      },
    });
  }
  sources.add(readiness);
}

/**
 * /healthz and /readyz of a process without an API of its own (a worker), to serve with `listen`:
 * /readyz is 200 `{ status: 'ready', checks }`, or 503 `{ status: 'unavailable', checks }` while the
 * database does not answer (contract section 12); any other path is 404.
 */
export function healthEndpoints(readiness: Readiness): RequestListener {
  return (req, res) => {
    const answer = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    };
    if (req.url === '/healthz') return answer(200, { status: 'ok' });
    if (req.url === '/readyz') {
      void readiness.check().then(({ ready, checks }) => answer(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks }));
      return;
    }
    answer(404, { status: 'not_found' });
  };
}
