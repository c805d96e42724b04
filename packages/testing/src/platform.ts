import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { migrate } from '@platform/core';
import { killWithThisProcess } from './child-registry';
import { freePorts, inheritedEnvironment, waitForHttp } from './processes';
import { startBalancer, type Balancer } from './balancer';
import { deleteRedisKeys } from './redis';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from './test-env';
import { sleep } from './wait';

/**
 * Starts the built platform (every deployable's `dist/`) as child processes on free loopback
 * ports, on databases of its own, for benchmarks and fault drills. Nothing here listens on
 * anything but 127.0.0.1.
 */

export type Deployable = 'gateway' | 'events' | 'warehouse' | 'pipelines';
export type ProcessKind = Deployable | 'worker';
export type ServiceName = 'events' | 'warehouse' | 'pipelines';

export interface ProcessSpec {
  kind: ProcessKind;
  /** Unique per platform; default: the kind, then `<kind>-2`, `<kind>-3`... */
  name?: string;
  /** On top of the platform's variables and `PlatformOptions.env`. */
  env?: Record<string, string>;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** Another checkout whose build this process runs (default: the platform's), e.g. an older commit's gateway for an A/B. */
  root?: string;
  /** Its API port (default: a free one; a service's first instance without a balancer: the service URL's). */
  port?: number;
  /**
   * Redis of another topology for this process alone: these variables in place of the platform's
   * Redis ones (which a spec's `env` can override but not unset, and a process refuses a mix), e.g.
   * a RedisCluster's `env` for one gateway of a platform on one server.
   */
  redis?: { env: Record<string, string> };
}

export interface PlatformOptions {
  /** `[a-z0-9_]`; databases are `platform_<deployable>_<name>`. */
  name: string;
  /** Default: events, warehouse, pipelines, worker, gateway. */
  processes?: (ProcessKind | ProcessSpec)[];
  /** Variables for every process (after the platform's own, so they can override them). */
  env?: Record<string, string>;
  /** Default: TEST_REDIS_URL, REDIS_URL or redis://127.0.0.1:6379. */
  redisUrl?: string;
  /**
   * Redis of any topology instead of `redisUrl`: the variables every process gets in place of
   * REDIS_URL (`REDIS_CLUSTER_NODES`, or `REDIS_SENTINELS` + `REDIS_SENTINEL_MASTER`); a
   * RedisCluster or RedisSentinel launcher is one.
   */
  redis?: { env: Record<string, string> };
  /**
   * A transaction-mode pooler in front of the PostgreSQL server (startPgBouncer's result): every
   * process gets its URL in `*_DATABASE_URL` and the server's in `*_DIRECT_DATABASE_URL`;
   * migrations and the launcher's own queries go to the server directly.
   */
  pgBouncer?: { urlFor(databaseUrl: string): string };
  /**
   * A round-robin TCP balancer at each service's URL in front of all its instances, as production
   * has (default: when `processes` holds more than one instance of a service). Without it the
   * first instance listens on the service URL and the gateway reaches no other.
   */
  balanceServices?: boolean;
  /** The PostgreSQL server; default DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres. */
  databaseUrl?: string;
  /** Drop and recreate the databases first (default true), so every start is clean. */
  fresh?: boolean;
  /** Drop the databases and delete the queue keys in stop() (default true). */
  dropOnStop?: boolean;
  /** Create a workspace and an unrestricted API key (default: when a gateway runs). */
  seed?: boolean;
  /** Seed the "Demo" workspace as `npm start` does (the CLI's demo-seed) instead of a workspace of the platform's own. */
  seedDemo?: boolean;
  /** PLATFORM_ADMIN_TOKEN of every process (default: a random one). */
  adminToken?: string;
  /** LOG_LEVEL of every process but the worker (default warn; the worker logs at info to say it is ready). */
  logLevel?: string;
  /** Where a started process answers 2xx once ready (default /healthz; /readyz also waits for its database). */
  readyPath?: '/healthz' | '/readyz';
  /** Per process start bound (default 90 s: generous on a loaded machine). */
  startTimeoutMs?: number;
  /** The repository root (default: found from this file). */
  root?: string;
  /** Every line a process writes, as it comes. */
  onOutput?: (name: string, line: string) => void;
  /** A process exited while the platform was not stopping (killed by a drill, crashed). */
  onExit?: (name: string, exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
}

export interface PlatformProcess {
  name: string;
  kind: ProcessKind;
  port: number;
  url: string;
  pid: number | undefined;
  running: boolean;
}

export interface Platform {
  name: string;
  /** The first gateway. */
  gatewayUrl: string;
  gatewayUrls: string[];
  /** What the gateway calls: the first instance of each service, or the balancer in front of all of them. */
  serviceUrls: Record<ServiceName, string>;
  /** The databases on the server itself (migrations, direct queries). */
  databaseUrls: Record<Deployable, string>;
  /** What the processes get in `*_DATABASE_URL`: `databaseUrls`, or the pooler's URLs with `pgBouncer`. */
  processDatabaseUrls: Record<Deployable, string>;
  /** The Redis URL processes get; empty when `redis` gave another topology. */
  redisUrl: string;
  /** The Redis variables every process gets: `{ REDIS_URL }`, or `redis.env`. */
  redisEnv: Record<string, string>;
  runsQueue: string;
  /** QUEUE_PREFIX of every process: this platform's queue keys are `<queuePrefix>:*`, deleted by stop(). */
  queuePrefix: string;
  token: string;
  workspaceId: string;
  keyId: string;
  adminToken: string;
  internalSecret: string;
  processes(): PlatformProcess[];
  /** Last lines a process wrote (stdout and stderr). */
  logs(name: string): string;
  /** Sends a signal (default SIGKILL) and resolves when the process has exited (bounded). */
  kill(name: string, signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops the process if it runs (SIGTERM, bounded), starts it again on the same port, waits until ready. */
  restart(name: string, overrides?: { env?: Record<string, string>; nodeArgs?: string[] }): Promise<void>;
  /** Adds a process (e.g. a second worker or gateway) and waits until it is ready; returns its name. */
  add(spec: ProcessKind | ProcessSpec): Promise<string>;
  /**
   * A new API key in the seeded workspace (admin API). `rateLimits` are the key's own limits per
   * bucket (requests per minute): a load loop that must never meet a 429 sets them above its rate.
   */
  createApiKey(options?: { name?: string; scopes?: string[] | null; rateLimits?: Record<string, number> }): Promise<{ id: string; token: string }>;
  /** SIGTERM every child, SIGKILL what is left after `graceMs`, drop the databases; idempotent, never throws. */
  stop(graceMs?: number): Promise<void>;
}

const DEPLOYABLE_DIRS: Record<Deployable, string> = {
  gateway: 'gateway',
  events: 'services/events',
  warehouse: 'services/warehouse',
  pipelines: 'services/pipelines',
};

const ENTRIES: Record<ProcessKind, string> = {
  gateway: 'gateway/dist/main.js',
  events: 'services/events/dist/main.js',
  warehouse: 'services/warehouse/dist/main.js',
  pipelines: 'services/pipelines/dist/main.js',
  worker: 'services/pipelines/dist/worker.js',
};

const DEFAULT_PROCESSES: ProcessKind[] = ['events', 'warehouse', 'pipelines', 'worker', 'gateway'];
const SERVICES: ServiceName[] = ['events', 'warehouse', 'pipelines'];

const OUTPUT_LINES_KEPT = 300;

function databaseUrlFor(server: string, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

async function dropDatabase(server: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrlFor(server, 'postgres'), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

interface Child {
  spec: Required<Pick<ProcessSpec, 'kind' | 'name'>> & ProcessSpec;
  port: number;
  process?: ChildProcess;
  exited?: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  lines: string[];
}

function isRunning(child: Child): boolean {
  return child.process !== undefined && child.process.exitCode === null && child.process.signalCode === null;
}

/**
 * Creates and migrates `platform_<deployable>_<name>` databases, spawns the chosen built
 * processes on free ports (random admin token and internal secret, a run queue of its own), waits
 * until each answers /healthz (the worker: until it says it is ready), and seeds a workspace and
 * an API key. On any failure every child is killed before the error is thrown.
 */
export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  if (!/^[a-z0-9_]{1,40}$/.test(options.name)) throw new Error(`platform name must be [a-z0-9_]{1,40}: ${options.name}`);
  const root = options.root ?? resolve(__dirname, '..', '..', '..');
  const server = options.databaseUrl ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const redisUrl = options.redisUrl ?? process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  const readyPath = options.readyPath ?? '/healthz';
  const logLevel = options.logLevel ?? 'warn';
  const suffix = randomBytes(4).toString('hex');
  const adminToken = options.adminToken ?? `adm_${randomBytes(24).toString('base64url')}`;
  const internalSecret = randomBytes(32).toString('base64url');
  const runsQueue = `runs-${options.name}-${suffix}`;
  // Platforms share one Redis: each its own queue prefix, so none takes another's jobs.
  const queuePrefix = `platform-${options.name}-${suffix}`;

  const specs: Child['spec'][] = [];
  const counts = new Map<ProcessKind, number>();
  const nameSpec = (input: ProcessKind | ProcessSpec): Child['spec'] => {
    const spec = typeof input === 'string' ? { kind: input } : input;
    const n = (counts.get(spec.kind) ?? 0) + 1;
    counts.set(spec.kind, n);
    return { ...spec, name: spec.name ?? (n === 1 ? spec.kind : `${spec.kind}-${n}`) };
  };
  for (const p of options.processes ?? DEFAULT_PROCESSES) specs.push(nameSpec(p));
  if (new Set(specs.map((s) => s.name)).size !== specs.length) throw new Error('process names must be unique');

  const databaseNames = Object.fromEntries((Object.keys(DEPLOYABLE_DIRS) as Deployable[]).map((d) => [d, `platform_${d}_${options.name}`])) as Record<
    Deployable,
    string
  >;
  const databaseUrls = Object.fromEntries((Object.keys(databaseNames) as Deployable[]).map((d) => [d, databaseUrlFor(server, databaseNames[d])])) as Record<
    Deployable,
    string
  >;
  const pooler = options.pgBouncer;
  const processDatabaseUrls = Object.fromEntries(
    (Object.keys(databaseUrls) as Deployable[]).map((d) => [d, pooler ? pooler.urlFor(databaseUrls[d]) : databaseUrls[d]]),
  ) as Record<Deployable, string>;
  const databaseVariables: Record<string, string> = {};
  for (const d of Object.keys(databaseUrls) as Deployable[]) {
    databaseVariables[`${d.toUpperCase()}_DATABASE_URL`] = processDatabaseUrls[d];
    // Migrations and session-level work (advisory locks, LISTEN) need the server itself, not a transaction-mode pool.
    if (pooler) databaseVariables[`${d.toUpperCase()}_DIRECT_DATABASE_URL`] = databaseUrls[d];
  }
  const redisEnv = options.redis ? { ...options.redis.env } : { REDIS_URL: redisUrl };
  const hasGateway = specs.some((s) => s.kind === 'gateway');
  const seed = options.seed ?? hasGateway;
  const used = new Set<Deployable>(specs.map((s) => (s.kind === 'worker' ? 'pipelines' : s.kind)));
  if (seed) used.add('gateway');

  // Every service gets a port even when it does not run: the gateway then meets a refused connection.
  const balanced = options.balanceServices ?? SERVICES.some((service) => specs.filter((spec) => spec.kind === service).length > 1);
  const ports = await freePorts(SERVICES.length);
  const servicePorts = Object.fromEntries(SERVICES.map((s, i) => [s, ports[i]!])) as Record<ServiceName, number>;
  const serviceUrls = Object.fromEntries(SERVICES.map((s) => [s, `http://127.0.0.1:${servicePorts[s]}`])) as Record<ServiceName, string>;

  const baseEnv: Record<string, string> = inheritedEnvironment();
  Object.assign(baseEnv, {
    PLATFORM_ADMIN_TOKEN: adminToken,
    PLATFORM_INTERNAL_SECRET: internalSecret,
    ...databaseVariables,
    // The postgres destination refuses these by name: this platform's own databases, whatever they are called.
    PIPELINES_PLATFORM_DATABASES: Object.values(databaseUrls)
      .map((url) => decodeURIComponent(new URL(url).pathname.slice(1)))
      .join(','),
    EVENTS_URL: serviceUrls.events,
    WAREHOUSE_URL: serviceUrls.warehouse,
    PIPELINES_URL: serviceUrls.pipelines,
    PIPELINES_RUNS_QUEUE: runsQueue,
    QUEUE_PREFIX: queuePrefix,
    // Every process's /metrics on a free port (0), so platforms never collide with each other.
    METRICS_PORT: '0',
    LOG_LEVEL: logLevel,
  });

  const children = new Map<string, Child>();
  const balancers: Balancer[] = [];
  let stopped: Promise<void> | undefined;

  const envOf = (child: Child): Record<string, string> => {
    const own: Record<string, string> = {};
    switch (child.spec.kind) {
      case 'gateway':
        own.GATEWAY_PORT = String(child.port);
        own.REDIS_COMMAND_TIMEOUT_MS = String(TEST_REDIS_COMMAND_TIMEOUT_MS);
        break;
      case 'events':
        own.EVENTS_PORT = String(child.port);
        break;
      case 'warehouse':
        own.WAREHOUSE_PORT = String(child.port);
        break;
      case 'pipelines':
        own.PIPELINES_PORT = String(child.port);
        break;
      case 'worker':
        own.PIPELINES_WORKER_PORT = String(child.port);
        own.LOG_LEVEL = 'info';
        break;
    }
    // The worker's LOG_LEVEL stays info: its "worker ready" line is how the launcher knows it is.
    return {
      ...baseEnv,
      ...(child.spec.redis?.env ?? redisEnv),
      ...own,
      ...options.env,
      ...child.spec.env,
      ...(child.spec.kind === 'worker' ? { LOG_LEVEL: 'info' } : {}),
    };
  };

  const spawnChild = async (child: Child): Promise<void> => {
    const { name, kind } = child.spec;
    const checkout = child.spec.root ?? root;
    const proc = spawn(process.execPath, [...(child.spec.nodeArgs ?? []), '--enable-source-maps', join(checkout, ENTRIES[kind])], {
      cwd: checkout,
      env: envOf(child),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    killWithThisProcess(proc);
    child.process = proc;
    child.exited = new Promise((resolveExit) =>
      proc.once('exit', (code, signal) => {
        if (!stopped) options.onExit?.(name, { code, signal });
        resolveExit({ code, signal });
      }),
    );
    let ready = false;
    let pending = '';
    const onData = (chunk: string): void => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        child.lines.push(line);
        if (child.lines.length > OUTPUT_LINES_KEPT) child.lines.shift();
        if (line.includes('"msg":"worker ready"')) ready = true;
        options.onOutput?.(name, line);
      }
    };
    proc.stdout.setEncoding('utf8').on('data', onData);
    proc.stderr.setEncoding('utf8').on('data', onData);
    const gone = (): string | undefined =>
      proc.exitCode !== null || proc.signalCode !== null
        ? `${name} exited during start (${proc.exitCode ?? proc.signalCode}):\n${child.lines.slice(-30).join('\n')}`
        : undefined;
    try {
      await waitForHttp(`http://127.0.0.1:${child.port}${readyPath}`, { timeoutMs: startTimeoutMs, everyMs: 100, gone });
      if (kind === 'worker') {
        const deadline = Date.now() + startTimeoutMs;
        while (!ready) {
          const died = gone();
          if (died) throw new Error(died);
          if (Date.now() > deadline) throw new Error(`worker ${name} not ready within ${startTimeoutMs} ms:\n${child.lines.slice(-30).join('\n')}`);
          await sleep(50);
        }
      }
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}\n${child.lines.slice(-30).join('\n')}`, { cause: err });
    }
  };

  const stopChild = async (child: Child, signal: NodeJS.Signals, graceMs: number) => {
    if (!isRunning(child)) return child.exited ? await child.exited : { code: null, signal: null };
    child.process!.kill(signal);
    const timer = setTimeout(() => {
      if (isRunning(child)) child.process!.kill('SIGKILL');
    }, graceMs);
    try {
      return await child.exited!;
    } finally {
      clearTimeout(timer);
    }
  };

  const addChild = async (spec: Child['spec']): Promise<string> => {
    if (children.has(spec.name)) throw new Error(`a process named ${spec.name} exists`);
    // Something else answering on a chosen port would pass the readiness check in the process's stead.
    if (spec.port !== undefined && !(await portIsFree(spec.port))) throw new Error(`${spec.name}: port ${spec.port} is in use`);
    // The first instance of a service without a balancer answers at the URL the gateways were given.
    const atServiceUrl = !balanced && SERVICES.includes(spec.kind as ServiceName) && ![...children.values()].some((c) => c.spec.kind === spec.kind);
    const port = spec.port ?? (atServiceUrl ? servicePorts[spec.kind as ServiceName] : (await freePorts(1))[0]!);
    const child: Child = { spec, port, lines: [] };
    children.set(spec.name, child);
    // A port found free can still be taken by another listener before the process binds it: one
    // the launcher chose is chosen again.
    for (let attempt = 1; ; attempt++) {
      try {
        await spawnChild(child);
        return spec.name;
      } catch (err) {
        const taken = child.lines.some((line) => line.includes('EADDRINUSE'));
        if (!taken || spec.port !== undefined || atServiceUrl || attempt >= 3) throw err;
        await child.exited;
        child.lines = [];
        child.port = (await freePorts(1))[0]!;
      }
    }
  };

  const stop = (graceMs = 10_000): Promise<void> =>
    (stopped ??= (async () => {
      await Promise.all([...children.values()].map((child) => stopChild(child, 'SIGTERM', graceMs).catch(() => undefined)));
      await Promise.all(balancers.map((balancer) => balancer.close()));
      if (options.dropOnStop ?? true) {
        for (const d of used) await dropDatabase(server, databaseNames[d]).catch(() => undefined);
        await deleteRedisKeys(queuePrefix, options.redis ?? redisUrl).catch(() => undefined);
      }
    })());

  const admin = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const gateway = [...children.values()].find((c) => c.spec.kind === 'gateway');
    if (!gateway) throw new Error('no gateway in this platform');
    const res = await fetch(`http://127.0.0.1:${gateway.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };

  let workspaceId = '';
  try {
    // Databases first (one after the other: CREATE DATABASE copies template1 under a lock).
    for (const d of used) {
      if (options.fresh ?? true) await dropDatabase(server, databaseNames[d]);
      await migrate(databaseUrls[d], join(root, DEPLOYABLE_DIRS[d], 'prisma', 'migrations'));
    }
    if (balanced) {
      for (const service of SERVICES) {
        const instancePorts = () => [...children.values()].filter((c) => c.spec.kind === service && isRunning(c)).map((c) => c.port);
        balancers.push(await startBalancer({ port: servicePorts[service], targets: instancePorts }));
      }
    }
    // The services first, then the worker and the gateway, as `npm start` does (each group at once).
    const isService = (spec: Child['spec']) => SERVICES.includes(spec.kind as ServiceName);
    await Promise.all(specs.filter(isService).map(addChild));
    await Promise.all(specs.filter((s) => !isService(s)).map(addChild));

    let token = '';
    let keyId = '';
    if (seed) {
      if (hasGateway && !options.seedDemo) {
        const workspace = await admin('POST', '/admin/v1/workspaces', { name: `platform ${options.name}` });
        workspaceId = workspace.id as string;
        const key = await admin('POST', `/admin/v1/workspaces/${workspaceId}/api-keys`, { name: 'platform seed' });
        token = key.token as string;
        keyId = key.id as string;
      } else {
        const seeded = await runCli(root, ['demo-seed'], { ...baseEnv, ...redisEnv });
        const { workspace_id, token: seededToken } = JSON.parse(seeded) as { workspace_id: string; token: string };
        workspaceId = workspace_id;
        token = seededToken;
        // Without a gateway there is no admin API to list keys with (the CLI's `keys` commands call it): the key's row is read directly.
        keyId = await seededKeyId(databaseUrls.gateway, workspaceId, token);
      }
    }

    const gatewayUrls = () => [...children.values()].filter((c) => c.spec.kind === 'gateway').map((c) => `http://127.0.0.1:${c.port}`);
    const find = (name: string): Child => {
      const child = children.get(name);
      if (!child) throw new Error(`no process named ${name} (have: ${[...children.keys()].join(', ')})`);
      return child;
    };
    return {
      name: options.name,
      get gatewayUrl() {
        return gatewayUrls()[0] ?? '';
      },
      get gatewayUrls() {
        return gatewayUrls();
      },
      serviceUrls,
      databaseUrls,
      processDatabaseUrls,
      redisUrl: options.redis ? (options.redis.env.REDIS_URL ?? '') : redisUrl,
      redisEnv,
      runsQueue,
      queuePrefix,
      token,
      workspaceId,
      keyId,
      adminToken,
      internalSecret,
      processes: () =>
        [...children.values()].map((c) => ({
          name: c.spec.name,
          kind: c.spec.kind,
          port: c.port,
          url: `http://127.0.0.1:${c.port}`,
          pid: c.process?.pid,
          running: isRunning(c),
        })),
      logs: (name) => find(name).lines.join('\n'),
      kill: (name, signal = 'SIGKILL') => stopChild(find(name), signal, 10_000),
      restart: async (name, overrides = {}) => {
        const child = find(name);
        await stopChild(child, 'SIGTERM', 10_000);
        if (overrides.env) child.spec.env = { ...child.spec.env, ...overrides.env };
        if (overrides.nodeArgs) child.spec.nodeArgs = overrides.nodeArgs;
        await spawnChild(child);
      },
      add: (input) => addChild(nameSpec(input)),
      createApiKey: async ({ name = 'platform extra', scopes = null, rateLimits } = {}) => {
        const key = await admin('POST', `/admin/v1/workspaces/${workspaceId}/api-keys`, {
          name,
          ...(scopes === null ? {} : { scopes }),
          ...(rateLimits === undefined ? {} : { rate_limits: rateLimits }),
        });
        return { id: key.id as string, token: key.token as string };
      },
      stop,
    };
  } catch (err) {
    await stop(2_000);
    throw err;
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const probe = createServer();
    probe.once('error', () => resolveFree(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolveFree(true)));
  });
}

/** The id of the key whose token `demo-seed` printed, from the gateway's database. */
async function seededKeyId(databaseUrl: string, workspaceId: string, token: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; token_prefix: string }>('SELECT id, token_prefix FROM api_keys WHERE workspace_id = $1', [workspaceId]);
    return rows.find((row) => token.startsWith(row.token_prefix))?.id ?? '';
  } finally {
    await client.end();
  }
}

function runCli(root: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolveOut, reject) => {
    const proc = spawn(process.execPath, [join(root, 'packages', 'cli', 'dist', 'main.js'), ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolveOut(out);
      else reject(new Error(`platform ${args.join(' ')} failed (${code}): ${err}`));
    });
  });
}

export interface RedisServer {
  url: string;
  port: number;
  pid: number | undefined;
  /** Stops the server (default SIGKILL: an outage, not a shutdown). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts it again on the same port: empty without `persistDir`; with it, with every write
   * acknowledged before the stop, unless `wipe` deletes the data first (a Redis that lost it).
   */
  restart(options?: { wipe?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolveAnswer(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/**
 * A throwaway `redis-server` on a free loopback port that a drill may stop and start at will (the
 * machine's shared Redis is never touched). No persistence (`--save '' --appendonly no`) unless
 * `persistDir` is given: then an append-only file fsynced on every write, as a queue's Redis runs
 * in production.
 */
export async function startRedisServer(options: { port?: number; binary?: string; persistDir?: string } = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePorts(1))[0]!;
  const persistence = options.persistDir
    ? ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.persistDir]
    : ['--save', '', '--appendonly', 'no'];
  let proc: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    const child = spawn(options.binary ?? 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...persistence], {
      stdio: 'ignore',
    });
    killWithThisProcess(child);
    proc = child;
    exited = new Promise((r) => child.once('exit', () => r()));
    child.once('error', () => undefined);
    const deadline = Date.now() + 60_000;
    while (!(await redisAnswers(port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}) on port ${port}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await sleep(50);
    }
  };
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return proc?.pid;
    },
    kill,
    restart: async ({ wipe = false } = {}) => {
      await kill();
      if (wipe && options.persistDir) {
        for (const entry of readdirSync(options.persistDir)) rmSync(join(options.persistDir, entry), { recursive: true, force: true });
      }
      await start();
    },
    stop: () => kill('SIGTERM'),
  };
}
