import { startPgBouncer, type PgBouncer } from './pgbouncer';
import { startPlatform, type Platform, type PlatformProcess, type ProcessSpec } from './platform';
import { freePorts } from './processes';
import { startRedisCluster, type RedisCluster, type RedisClusterOptions } from './redis-cluster';

/**
 * A fleet on one machine (contract section 17): one platform of several gateways, instances of
 * each service and run workers, on a Redis Cluster and behind PgBouncer in transaction mode, with
 * a round-robin balancer in front of each service's instances. `npm run fleet` runs one; drills
 * start one, kill Redis masters and processes under load, and read every process's log.
 */

export interface FleetOptions {
  /** `[a-z0-9_]`; databases are `platform_<deployable>_<name>` (default `fleet`). */
  name?: string;
  /** Default 2. */
  gateways?: number;
  /** Default 2 of each of events, warehouse and pipelines. */
  instancesPerService?: number;
  /** Run workers; default 2. */
  workers?: number;
  /** The first gateway's port, the others on the next ports (default: free ports). */
  gatewayPort?: number;
  /** Default 3 masters with 1 replica each. */
  redis?: RedisClusterOptions;
  /** PgBouncer's server connections per database and user, and clients in all (its defaults unless set). */
  pgBouncer?: { poolSize?: number; maxClientConn?: number };
  /** The PostgreSQL server; default DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres. */
  databaseUrl?: string;
  /** Variables for every process. */
  env?: Record<string, string>;
  /** PLATFORM_ADMIN_TOKEN (default: a random one). */
  adminToken?: string;
  /** LOG_LEVEL of every process but the workers (default warn). */
  logLevel?: string;
  /** Lines kept for logs() over all processes (default 200,000; the oldest go first). */
  logLinesKept?: number;
  /** The repository root (default: found from this file). */
  root?: string;
  /** Every line a process writes, as it comes. */
  onOutput?: (name: string, line: string) => void;
  /** A process exited while the fleet was not stopping. */
  onExit?: (name: string, exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
}

export interface FleetProcess extends PlatformProcess {
  /** GET /metrics of this process. */
  metricsUrl: string;
}

export interface Fleet {
  /** The platform: its processes, kill, restart, add, createApiKey... */
  platform: Platform;
  redis: RedisCluster;
  pgBouncer: PgBouncer;
  gatewayUrls: string[];
  /** The balancer in front of each service's instances (what the gateways call). */
  serviceUrls: Platform['serviceUrls'];
  /** REDIS_CLUSTER_NODES of every process. */
  seeds: string;
  adminToken: string;
  /** The "Demo" workspace and an unrestricted key in it, as `npm start` seeds them. */
  workspaceId: string;
  token: string;
  keyId: string;
  processes(): FleetProcess[];
  /** Every line the processes wrote since the start, oldest first (of one process, or all). */
  logs(name?: string): { name: string; line: string }[];
  /** SIGKILLs a Redis master (default the one serving slot 0) and resolves once its replica serves its slots. */
  killMaster(index?: number): ReturnType<RedisCluster['killMaster']>;
  /** Stops the platform, then PgBouncer and the cluster; idempotent, never throws. */
  stop(): Promise<void>;
}

/**
 * Starts a Redis Cluster and PgBouncer (transaction mode) at once, then one platform on them:
 * `gateways` gateways, `instancesPerService` instances of each service behind a round-robin
 * balancer, `workers` run workers, every process with a /metrics port of its own, seeded with the
 * "Demo" workspace and a key. On any failure everything started is stopped before the error is thrown.
 */
export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const { name = 'fleet', gateways = 2, instancesPerService = 2, workers = 2, logLinesKept = 200_000 } = options;
  const specs: ProcessSpec[] = [];
  for (const kind of ['events', 'warehouse', 'pipelines'] as const) {
    for (let i = 1; i <= instancesPerService; i++) specs.push({ kind, name: `${kind}-${i}` });
  }
  for (let i = 1; i <= workers; i++) specs.push({ kind: 'worker', name: `worker-${i}` });
  for (let i = 1; i <= gateways; i++) {
    specs.push({ kind: 'gateway', name: `gateway-${i}`, ...(options.gatewayPort ? { port: options.gatewayPort + i - 1 } : {}) });
  }
  const metricsPorts = await freePorts(specs.length);
  specs.forEach((spec, i) => (spec.env = { METRICS_PORT: String(metricsPorts[i]) }));
  const metricsPortOf = new Map(specs.map((spec, i) => [spec.name!, metricsPorts[i]!]));

  const lines: { name: string; line: string }[] = [];
  const started: { stop(): Promise<void> }[] = [];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      // The platform first: its processes close their Redis and database connections before those go.
      for (const part of started.reverse()) await part.stop().catch(() => undefined);
    })());

  try {
    const [redis, pgBouncer] = await Promise.all([
      startRedisCluster({ masters: 3, replicasPerMaster: 1, ...options.redis }).then((cluster) => (started.push(cluster), cluster)),
      startPgBouncer({ upstream: options.databaseUrl, ...options.pgBouncer }).then((pooler) => (started.push(pooler), pooler)),
    ]);
    const platform = await startPlatform({
      name,
      processes: specs,
      redis,
      pgBouncer,
      balanceServices: true,
      seedDemo: true,
      databaseUrl: options.databaseUrl,
      adminToken: options.adminToken,
      logLevel: options.logLevel,
      env: options.env,
      root: options.root,
      onOutput: (process, line) => {
        lines.push({ name: process, line });
        // Trimmed in batches: a splice per line would copy the whole array every line.
        if (lines.length > logLinesKept * 1.1) lines.splice(0, lines.length - logLinesKept);
        options.onOutput?.(process, line);
      },
      onExit: options.onExit,
    });
    started.push(platform);
    return {
      platform,
      redis,
      pgBouncer,
      get gatewayUrls() {
        return platform.gatewayUrls;
      },
      serviceUrls: platform.serviceUrls,
      seeds: redis.seeds,
      adminToken: platform.adminToken,
      workspaceId: platform.workspaceId,
      token: platform.token,
      keyId: platform.keyId,
      processes: () =>
        platform.processes().map((p) => ({
          ...p,
          metricsUrl: metricsPortOf.has(p.name) ? `http://127.0.0.1:${metricsPortOf.get(p.name)}/metrics` : '',
        })),
      logs: (process) => (process === undefined ? [...lines] : lines.filter((entry) => entry.name === process)),
      killMaster: (index) => redis.killMaster(index),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
