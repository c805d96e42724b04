import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrate, type ServiceName } from '@platform/core';
import { TEST_INTERNAL_SECRET, testDatabaseUrl } from './test-env';

/**
 * The ports the kernel hands out for outgoing connections (ip_local_port_range). A port found free
 * there can be taken by any connection this machine opens before the process it was meant for listens
 * (a fleet opens hundreds: Redis nodes, PgBouncer, pools); ports below the range are only ever taken
 * by a listener.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && high) return [low, high];
  } catch {
    // not Linux: the IANA dynamic range
  }
  return [49152, 65535];
}

/** Above every port the Fetch standard blocks (the highest is 10080): a fetch() to one fails without connecting. */
const LOWEST_TEST_PORT = 10_100;

function listenOn(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/**
 * Free TCP ports on 127.0.0.1 right now, all held open together so none is handed out twice, chosen
 * at random below the ephemeral range (where no outgoing connection can take one before its process
 * listens); from the kernel (port 0) where that range leaves no room.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  const [ephemeralLow] = ephemeralRange();
  const span = ephemeralLow - LOWEST_TEST_PORT;
  try {
    for (let attempts = 0; servers.length < count && attempts < count * 50 && span > count * 10; attempts++) {
      const server = await listenOn(LOWEST_TEST_PORT + Math.floor(Math.random() * span));
      if (server) servers.push(server);
    }
    while (servers.length < count) {
      const server = await listenOn(0);
      if (!server) throw new Error('no free port on 127.0.0.1');
      servers.push(server);
    }
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * Redis for spawned deployables: a logical database of its own (TEST_PROCESS_REDIS_DB, default 12),
 * because their webhook delivery queue names are fixed (`webhooks-events`...) and must not meet those
 * of `npm start` (database 0) or of the e2e suite (13).
 */
export function processRedisUrl(): string {
  const url = new URL(process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  url.pathname = `/${process.env.TEST_PROCESS_REDIS_DB ?? '12'}`;
  return url.toString();
}

export interface SpawnedProcess {
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr (JSON log lines). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
  /** Sends the signal (default SIGTERM) and resolves when the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const spawned = new Set<SpawnedProcess>();

// Variables the deployables read: the test runner's must not leak into a process it starts.
const DEPLOYABLE_VARIABLE =
  /^(PLATFORM_|WEBHOOKS_|WORKER_|PIPELINES_|GATEWAY_|EVENTS_|WAREHOUSE_|CONNECTORS_|HTTP_JSON_|METRICS_PORT$|LOG_LEVEL$|REDIS_|QUEUE_PREFIX$|HOST$|DATABASE_URL$|OTEL_)|_DATABASE_URL$/;

/** This process's environment without any variable a deployable reads: the base of every spawned deployable's. */
export function inheritedEnvironment(): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !DEPLOYABLE_VARIABLE.test(name)) inherited[name] = value;
  return inherited;
}

/** Runs a built entry point (`node dist/main.js`) as a real process, configured by `env` alone. */
export function spawnProcess(entry: string, env: Record<string, string>): SpawnedProcess {
  const child = spawn(process.execPath, ['--enable-source-maps', entry], {
    env: { ...inheritedEnvironment(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  const handle: SpawnedProcess = {
    child,
    output: () => output,
    exited,
    running,
    kill: async (signal = 'SIGTERM') => {
      if (running()) child.kill(signal);
      return exited;
    },
  };
  spawned.add(handle);
  void exited.then(() => spawned.delete(handle));
  return handle;
}

/** How a process exited, with its output when it did not exit 0, so that a failed expectation shows why. */
export async function exitReport(proc: SpawnedProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const exit = await proc.exited;
  return { ...exit, output: exit.code === 0 ? '' : proc.output() };
}

/** A deployable's real process, ready. */
export interface ReadyProcess {
  proc: SpawnedProcess;
  /** `http://127.0.0.1:<port>`: its API port, which answers /healthz and /readyz. */
  url: string;
  /** GET /metrics on its METRICS_PORT. */
  metricsUrl: string;
}

/**
 * Runs a built entry point with `portVariable` and METRICS_PORT on free ports, the tests' Redis
 * for processes and the test internal secret, and resolves once its /readyz answers.
 */
export async function spawnDeployable(entry: string, portVariable: string, env: Record<string, string>): Promise<ReadyProcess> {
  const [port, metricsPort] = await freePorts(2);
  const proc = spawnProcess(entry, {
    [portVariable]: String(port),
    METRICS_PORT: String(metricsPort),
    REDIS_URL: processRedisUrl(),
    PLATFORM_INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/readyz`, { process: proc });
  return { proc, url, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}

/**
 * A service's built main (`<dir>/dist/main.js`) as a real process, ready, on a test database of its
 * own (`testDatabaseUrl(database)`, migrated first), so that its outbox relay takes no other test
 * file's rows. `<SERVICE>_PORT` and `<SERVICE>_DATABASE_URL` are set; `env` adds to or overrides them.
 */
export async function spawnService(service: ServiceName, dir: string, options: { database: string; env?: Record<string, string> }): Promise<ReadyProcess> {
  const databaseUrl = testDatabaseUrl(options.database);
  await migrate(databaseUrl, join(dir, 'prisma', 'migrations'));
  const prefix = service.toUpperCase();
  return spawnDeployable(join(dir, 'dist', 'main.js'), `${prefix}_PORT`, { [`${prefix}_DATABASE_URL`]: databaseUrl, ...options.env });
}

/** SIGKILLs every process spawnProcess started that still runs (afterAll). */
export async function killSpawned(): Promise<void> {
  await Promise.all([...spawned].map((p) => p.kill('SIGKILL')));
}

export interface ReadinessOptions {
  /** Default 60 s. */
  timeoutMs?: number;
  /** Pause between attempts (default 50 ms); each attempt is bounded by 10 s. */
  everyMs?: number;
  /** A process spawnProcess started: its exit fails the wait at once, its output is in the error. */
  process?: SpawnedProcess;
  /** Why waiting is pointless now (a process exited), or undefined: a reason fails the wait at once. */
  gone?: () => string | undefined;
}

/** The one readiness loop: resolves once a GET of `url` answers 2xx; fails when the process is gone or after `timeoutMs`. */
export async function waitForHttp(url: string, options: ReadinessOptions = {}): Promise<void> {
  const { timeoutMs = 60_000, everyMs = 50, process: watched } = options;
  const gone = options.gone ?? (() => (watched?.running() === false ? `process exited before ${url} answered:\n${watched.output()}` : undefined));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = gone();
    if (reason) throw new Error(reason);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no answer from ${url} within ${timeoutMs} ms${watched ? `:\n${watched.output()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
