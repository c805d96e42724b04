import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { serviceClient, testDatabaseUrl, testIdentity, testRedisUrl, type ServiceClient } from '@platform/testing';
import { queueNamed, startTestApp, type TestApp, type TestQueue } from './app';
import { closeTestPool } from './fixtures';

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves once the worker has connected to its queue. */
  ready: Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote (JSON log lines), for assertions and failure messages. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const WORKER_ENTRY = join(__dirname, '..', '..', 'dist', 'worker.js');
const running = new Set<WorkerProcess>();

/**
 * Spawns the real worker (`node dist/worker.js`) on the test database and the given queue (name
 * and key prefix, as the test's API has them), with short lock and stall intervals so a killed
 * worker's job is recovered within seconds.
 */
export function spawnWorker(queueOrName: TestQueue | string, env: Record<string, string> = {}): WorkerProcess {
  const queue = typeof queueOrName === 'string' ? queueNamed(queueOrName) : queueOrName;
  const child = spawn(process.execPath, ['--enable-source-maps', WORKER_ENTRY], {
    env: {
      ...process.env,
      PIPELINES_DATABASE_URL: testDatabaseUrl('pipelines'),
      REDIS_URL: testRedisUrl(),
      PIPELINES_RUNS_QUEUE: queue.name,
      QUEUE_PREFIX: queue.prefix,
      PIPELINES_WORKER_PORT: '0',
      // Several workers run at once in some tests: each metrics server on a free port.
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      WORKER_CONCURRENCY: '2',
      WORKER_BATCH_SIZE: '10',
      WORKER_STEP_DELAY_MS: '0',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '500',
      // This database is shared by one queue per test, and a run does not name its queue: the requeue
      // of lost jobs would hand other tests' queued runs to this worker. The Redis drill covers it.
      WORKER_REQUEUE_INTERVAL_MS: '3600000',
      // Likewise the scheduler ticks every workspace's pipelines in the database: on only where a test asks (its own database).
      WORKER_SCHEDULER_ENABLED: 'false',
      WORKER_SHUTDOWN_TIMEOUT_MS: '10000',
      CONNECTORS_ALLOW_PRIVATE: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const ready = new Promise<void>((resolve, reject) => {
    // Generous: on a busy two-core machine a cold node start with Prisma's first query can take many seconds.
    const timer = setTimeout(() => reject(new Error(`worker not ready within 60 s:\n${output}`)), 60_000);
    const check = () => {
      if (output.includes('"msg":"worker ready"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
  ready.catch(() => undefined);
  const handle: WorkerProcess = {
    child,
    ready,
    exited,
    output: () => output,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  running.add(handle);
  void exited.then(() => running.delete(handle));
  return handle;
}

/** SIGKILLs every worker a test left running (afterAll). */
export async function killAllWorkers(): Promise<void> {
  await Promise.all([...running].map((w) => w.kill('SIGKILL')));
}

/** A test file's API and worker: started per test by `start`, stopped after each test; every worker and the test pool after the file. */
export interface AppAndWorker {
  app?: TestApp;
  worker?: WorkerProcess;
  /** The test app on `queue` and, unless `workerEnv` is null, a worker on it (ready); a client of a new workspace. */
  start(queue: TestQueue, workerEnv?: Record<string, string> | null): Promise<ServiceClient>;
}

/** Registers the teardown (the worker stopped with `signal`) and returns the holder the file's tests fill. */
export function appAndWorkerPerTest(signal: NodeJS.Signals = 'SIGKILL'): AppAndWorker {
  const rig: AppAndWorker = {
    async start(queue, workerEnv = {}) {
      if (workerEnv) rig.worker = spawnWorker(queue, workerEnv);
      const app = await startTestApp({ queue });
      rig.app = app;
      await rig.worker?.ready;
      return serviceClient('pipelines', app.server, testIdentity());
    },
  };
  afterEach(async () => {
    await rig.worker?.kill(signal);
    await rig.app?.close();
    rig.app = undefined;
    rig.worker = undefined;
  });
  afterAll(async () => {
    await killAllWorkers();
    await closeTestPool();
  });
  return rig;
}
