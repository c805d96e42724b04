import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { startPlatform, type Platform } from '@platform/testing';

/** Where screenshots and the processes' logs go (git-ignored). */
export const ARTIFACTS_DIR = join(__dirname, '..', 'artifacts');

/**
 * The whole suite, from the platform's start: past this the processes are killed and jest is
 * ended, so a hung browser or service can never hold CI (each test is bounded by jest's timeout too).
 * A guard against a hang, not a speed bound: generous enough for a machine whose cores are busy
 * (80 s was passed on 2 loaded cores while the suite was healthy).
 */
const SUITE_BUDGET_MS = 600_000;

/**
 * A Redis logical database of its own (E2E_REDIS_DB, default 13), apart from a development
 * platform's, on top of the launcher's queue prefix.
 */
function redisUrl(): string {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  url.pathname = `/${process.env.E2E_REDIS_DB ?? '13'}`;
  return url.toString();
}

/**
 * The whole platform from the built `dist/` entry points, started by @platform/testing's launcher
 * (gateway, the three services and the worker on free ports, ready once each answers /readyz), on
 * `platform_<deployable>_e2e_<random>` databases of the server of DATABASE_URL (or
 * TEST_DATABASE_URL_BASE), dropped by stop(). Each process's output goes to artifacts/logs/<name>.log.
 * Whatever happens to the test run (a crash, jest killed by a signal or by the time budget), no
 * process outlives it.
 */
export async function startE2ePlatform(): Promise<Platform> {
  const logDir = join(ARTIFACTS_DIR, 'logs');
  mkdirSync(logDir, { recursive: true });
  const logs = new Map<string, WriteStream>();
  const log = (name: string): WriteStream => {
    let stream = logs.get(name);
    if (!stream) logs.set(name, (stream = createWriteStream(join(logDir, `${name}.log`))));
    return stream;
  };
  const closeLogs = () => Promise.all([...logs.values()].map((stream) => new Promise((resolve) => stream.end(resolve))));

  let platform: Platform;
  try {
    platform = await startPlatform({
      // Its own databases: a run never meets another's (other checkouts may test on the same server).
      name: `e2e_${randomBytes(4).toString('hex')}`,
      databaseUrl: process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL_BASE,
      redisUrl: redisUrl(),
      processes: ['events', 'warehouse', 'pipelines', { kind: 'worker', env: { WORKER_SHUTDOWN_TIMEOUT_MS: '5000' } }, 'gateway'],
      readyPath: '/readyz',
      seed: false,
      logLevel: 'info',
      env: {
        // The tests' webhook receiver listens on 127.0.0.1.
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_RELAY_POLL_MS: '100',
        WEBHOOKS_RETRY_SCHEDULE_MS: '500,1000',
        WEBHOOKS_TIMEOUT_MS: '5000',
        // The console test sets a schedule of a few seconds.
        PIPELINES_SCHEDULE_MIN_INTERVAL_S: '1',
        // The console's steering test reads an http-json source on 127.0.0.1 that holds its answer
        // while runs wait in line; a run ends by cancel or by its run timeout (10 s), not the fetch's.
        CONNECTORS_ALLOW_PRIVATE: 'true',
        HTTP_JSON_TIMEOUT_MS: '120000',
      },
      onOutput: (name, line) => log(name).write(`${line}\n`),
    });
  } catch (err) {
    await closeLogs();
    throw err;
  }

  // A signal does not fire 'exit' (where the launcher kills its children): it is caught, the
  // processes are killed, and the signal is raised again with its default action.
  const killAll = (): void => {
    for (const { pid, running } of platform.processes()) if (running && pid !== undefined) process.kill(pid, 'SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    killAll();
    process.kill(process.pid, signal);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.once(signal, onSignal);
  const watchdog = setTimeout(() => {
    process.stderr.write(`e2e: the suite ran past its ${SUITE_BUDGET_MS / 1000} s budget; stopping the platform and the tests\n`);
    killAll();
    process.exit(1);
  }, SUITE_BUDGET_MS);
  watchdog.unref();

  const stop = platform.stop;
  let stopping: Promise<void> | undefined;
  return Object.assign(platform, {
    stop: (graceMs?: number): Promise<void> =>
      (stopping ??= stop(graceMs).finally(async () => {
        clearTimeout(watchdog);
        for (const signal of signals) process.removeListener(signal, onSignal);
        await closeLogs();
      })),
  });
}
