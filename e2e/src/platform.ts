import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { prepareTestDatabase } from '@platform/testing';

/** Where screenshots and the processes' logs go (git-ignored). */
export const ARTIFACTS_DIR = join(__dirname, '..', 'artifacts');

/** How long a process may take to answer /readyz after it was spawned. */
const READY_TIMEOUT_MS = 30_000;
/** SIGTERM lets a process finish its requests and current job; after this it is killed. */
const STOP_TIMEOUT_MS = 10_000;
/**
 * The whole suite, from the platform's start: past this the processes are killed and jest is
 * ended, so a hung browser or service can never hold CI (each test is bounded by jest's timeout too).
 */
const SUITE_BUDGET_MS = 80_000;

export interface PlatformProcess {
  name: string;
  child: ChildProcess;
  log: string;
}

export interface Platform {
  gatewayUrl: string;
  adminToken: string;
  processes: PlatformProcess[];
  /** SIGTERM to every process, SIGKILL to any still running after STOP_TIMEOUT_MS. Idempotent. */
  stop(): Promise<void>;
}

/** A package's directory through the workspace dependency (its built `dist/` and `prisma/`). */
function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

/** Ports free right now: all are held open together so none is handed out twice. */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
      servers.push(server);
    }
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * The e2e databases: `platform_<name>_e2e` on the server of DATABASE_URL (or the tests'
 * TEST_DATABASE_URL_BASE), never the development or unit-test ones.
 */
function databaseUrl(name: string): string {
  const base = new URL(process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL_BASE ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/platform_${name}_e2e`;
  return base.toString();
}

/**
 * A Redis logical database of its own (E2E_REDIS_DB, default 13): the webhook delivery queues
 * have fixed names, so a development platform on the same Redis would otherwise share them.
 */
function redisUrl(): string {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  url.pathname = `/${process.env.E2E_REDIS_DB ?? '13'}`;
  return url.toString();
}

function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitReady(proc: PlatformProcess, url: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(`${proc.name} exited during start (${proc.child.exitCode ?? proc.child.signalCode}); log ${proc.log}:\n${logTail(proc.log)}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${proc.name} was not ready at ${url} within ${READY_TIMEOUT_MS} ms; log ${proc.log}:\n${logTail(proc.log)}`);
}

function stopProcesses(processes: PlatformProcess[]): Promise<void> {
  return Promise.all(
    processes.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
}

/**
 * The whole platform from the built `dist/` entry points, as `npm start` runs it: gateway, the
 * three services and the pipelines worker as child processes on free ports, on migrated e2e
 * databases, with a random admin token and internal secret. Stops what it started if a process
 * fails to come up, and kills leftovers when the test process exits.
 */
export async function startPlatform(): Promise<Platform> {
  const logDir = join(ARTIFACTS_DIR, 'logs');
  mkdirSync(logDir, { recursive: true });

  const dirs = {
    gateway: packageDir('@platform/gateway'),
    events: packageDir('@platform/events'),
    warehouse: packageDir('@platform/warehouse'),
    pipelines: packageDir('@platform/pipelines'),
  };
  const databases = Object.fromEntries(Object.keys(dirs).map((name) => [name, databaseUrl(name)])) as Record<keyof typeof dirs, string>;
  await Promise.all((Object.keys(dirs) as (keyof typeof dirs)[]).map((name) => prepareTestDatabase(databases[name], join(dirs[name], 'prisma', 'migrations'))));

  const [gatewayPort, eventsPort, warehousePort, pipelinesPort, workerPort] = (await freePorts(5)) as [number, number, number, number, number];
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  const common: NodeJS.ProcessEnv = {
    // Only what the processes need: nothing from the developer's shell leaks into their config.
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: 'info',
    REDIS_URL: redisUrl(),
    PLATFORM_INTERNAL_SECRET: randomBytes(32).toString('base64url'),
    // The tests' webhook receiver listens on 127.0.0.1.
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    WEBHOOKS_RELAY_POLL_MS: '100',
    WEBHOOKS_RETRY_SCHEDULE_MS: '500,1000',
    WEBHOOKS_TIMEOUT_MS: '5000',
    // A free metrics port per process, so the suite never clashes with a running platform.
    METRICS_PORT: '0',
  };
  const runsQueue = `e2e-runs-${randomBytes(4).toString('hex')}`;
  const specs: { name: string; entry: string; env: NodeJS.ProcessEnv; ready: string }[] = [
    {
      name: 'events',
      entry: join(dirs.events, 'dist', 'main.js'),
      env: { EVENTS_PORT: String(eventsPort), EVENTS_DATABASE_URL: databases.events },
      ready: `http://127.0.0.1:${eventsPort}/readyz`,
    },
    {
      name: 'warehouse',
      entry: join(dirs.warehouse, 'dist', 'main.js'),
      env: { WAREHOUSE_PORT: String(warehousePort), WAREHOUSE_DATABASE_URL: databases.warehouse },
      ready: `http://127.0.0.1:${warehousePort}/readyz`,
    },
    {
      name: 'pipelines',
      entry: join(dirs.pipelines, 'dist', 'main.js'),
      env: { PIPELINES_PORT: String(pipelinesPort), PIPELINES_DATABASE_URL: databases.pipelines, PIPELINES_RUNS_QUEUE: runsQueue },
      ready: `http://127.0.0.1:${pipelinesPort}/readyz`,
    },
    {
      name: 'worker',
      entry: join(dirs.pipelines, 'dist', 'worker.js'),
      env: { PIPELINES_WORKER_PORT: String(workerPort), PIPELINES_DATABASE_URL: databases.pipelines, PIPELINES_RUNS_QUEUE: runsQueue, WORKER_SHUTDOWN_TIMEOUT_MS: '5000' },
      ready: `http://127.0.0.1:${workerPort}/readyz`,
    },
    {
      name: 'gateway',
      entry: join(dirs.gateway, 'dist', 'main.js'),
      env: {
        GATEWAY_PORT: String(gatewayPort),
        GATEWAY_DATABASE_URL: databases.gateway,
        PLATFORM_ADMIN_TOKEN: adminToken,
        EVENTS_URL: `http://127.0.0.1:${eventsPort}`,
        WAREHOUSE_URL: `http://127.0.0.1:${warehousePort}`,
        PIPELINES_URL: `http://127.0.0.1:${pipelinesPort}`,
      },
      ready: `http://127.0.0.1:${gatewayPort}/readyz`,
    },
  ];

  const processes: PlatformProcess[] = specs.map(({ name, entry, env }) => {
    const log = join(logDir, `${name}.log`);
    const fd = openSync(log, 'w');
    try {
      const child = spawn(process.execPath, ['--enable-source-maps', entry], { env: { ...common, ...env }, stdio: ['ignore', fd, fd] });
      return { name, child, log };
    } finally {
      closeSync(fd);
    }
  });
  // Whatever happens to the test run (a crash, a forgotten teardown, jest killed by a signal or
  // by the time budget), no process outlives it. A signal does not fire 'exit': it is caught,
  // the processes are killed, and the signal is raised again with its default action.
  const killAll = (): void => {
    for (const { child } of processes) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    killAll();
    process.kill(process.pid, signal);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  process.once('exit', killAll);
  for (const signal of signals) process.once(signal, onSignal);
  const watchdog = setTimeout(() => {
    process.stderr.write(`e2e: the suite ran past its ${SUITE_BUDGET_MS / 1000} s budget; stopping the platform and the tests\n`);
    killAll();
    process.exit(1);
  }, SUITE_BUDGET_MS);
  watchdog.unref();

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= stopProcesses(processes).finally(() => {
      clearTimeout(watchdog);
      process.removeListener('exit', killAll);
      for (const signal of signals) process.removeListener(signal, onSignal);
    }));

  try {
    await Promise.all(processes.map((proc, i) => waitReady(proc, specs[i]!.ready)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { gatewayUrl: `http://127.0.0.1:${gatewayPort}`, adminToken, processes, stop };
}
