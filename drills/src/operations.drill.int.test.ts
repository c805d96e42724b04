import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { metricsLintProblems, promtoolProblems } from '@platform/core';
import {
  freePorts,
  killSpawned,
  prepareTestDatabase,
  processRedisUrl,
  spawnProcess,
  TEST_INTERNAL_SECRET,
  testDatabaseUrl,
  uniqueName,
  waitForHttp,
  type SpawnedProcess,
} from '@platform/testing';

// Every process of the platform, as built (node dist/*.js), on the operations rules of the
// contract: it listens on HOST (127.0.0.1 unless set), its metrics port too (section 4); its
// /readyz fails only when its database does not answer, Redis down is shown (section 12); its
// /metrics passes the Prometheus naming rules (and `promtool check metrics` where installed).

const ROOT = join(__dirname, '..', '..');
/** Nothing listens here: connections are refused at once. */
const DEAD_REDIS_URL = 'redis://127.0.0.1:1';
const DEAD_URL = 'http://127.0.0.1:1';

interface Deployable {
  name: string;
  entry: string;
  /** The variable of the port that answers /healthz and /readyz. */
  portVariable: string;
  databaseVariable: string;
  /** The package whose migrations its database gets. */
  dir: string;
  env?: Record<string, string>;
}

const runsQueue = uniqueName('runs-ops');
const DEPLOYABLES: Deployable[] = [
  { name: 'events', entry: 'services/events/dist/main.js', portVariable: 'EVENTS_PORT', databaseVariable: 'EVENTS_DATABASE_URL', dir: 'services/events' },
  {
    name: 'warehouse',
    entry: 'services/warehouse/dist/main.js',
    portVariable: 'WAREHOUSE_PORT',
    databaseVariable: 'WAREHOUSE_DATABASE_URL',
    dir: 'services/warehouse',
  },
  {
    name: 'pipelines',
    entry: 'services/pipelines/dist/main.js',
    portVariable: 'PIPELINES_PORT',
    databaseVariable: 'PIPELINES_DATABASE_URL',
    dir: 'services/pipelines',
    env: { PIPELINES_RUNS_QUEUE: runsQueue },
  },
  {
    name: 'pipelines-worker',
    entry: 'services/pipelines/dist/worker.js',
    portVariable: 'PIPELINES_WORKER_PORT',
    databaseVariable: 'PIPELINES_DATABASE_URL',
    dir: 'services/pipelines',
    env: { PIPELINES_RUNS_QUEUE: runsQueue },
  },
  {
    name: 'gateway',
    entry: 'gateway/dist/main.js',
    portVariable: 'GATEWAY_PORT',
    databaseVariable: 'GATEWAY_DATABASE_URL',
    dir: 'gateway',
    env: { PLATFORM_ADMIN_TOKEN: `adm_${randomBytes(24).toString('base64url')}`, EVENTS_URL: DEAD_URL, WAREHOUSE_URL: DEAD_URL, PIPELINES_URL: DEAD_URL },
  },
];

const databaseOf = (d: Deployable) => testDatabaseUrl(`drill_ops_${d.dir.split('/').at(-1)}`);

beforeAll(async () => {
  for (const dir of new Set(DEPLOYABLES.map((d) => d.dir))) {
    await prepareTestDatabase(databaseOf(DEPLOYABLES.find((d) => d.dir === dir)!), join(ROOT, dir, 'prisma', 'migrations'));
  }
}, 60_000);
afterAll(killSpawned);

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.setTimeout(2_000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Addresses of this machine other than 127.0.0.1: another loopback one (Linux answers 127/8) and every non-loopback IPv4 interface. */
function otherLocalAddresses(): string[] {
  const external = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4' && !i.internal)
    .map((i) => i!.address);
  return [...(process.platform === 'linux' ? ['127.0.0.2'] : []), ...external];
}

async function start(d: Deployable, env: Record<string, string>): Promise<{ proc: SpawnedProcess; port: number; metricsPort: number }> {
  const [port, metricsPort] = await freePorts(2);
  const proc = spawnProcess(join(ROOT, d.entry), {
    [d.portVariable]: String(port!),
    METRICS_PORT: String(metricsPort!),
    [d.databaseVariable]: databaseOf(d),
    REDIS_URL: processRedisUrl(),
    PLATFORM_INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    LOG_LEVEL: 'warn',
    ...d.env,
    ...env,
  });
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, { process: proc });
  return { proc, port: port!, metricsPort: metricsPort! };
}

async function json(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.json() };
}

describe.each(DEPLOYABLES)('$name', (d) => {
  test('HOST unset and Redis unreachable: ready with Redis shown down; API and metrics ports on 127.0.0.1 only; /metrics passes the naming rules', async () => {
    const { proc, port, metricsPort } = await start(d, { REDIS_URL: DEAD_REDIS_URL });
    try {
      const ready = await json(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'down' } });

      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('platform_dependency_up{dependency="database"} 1');
      expect(text).toContain('platform_dependency_up{dependency="redis"} 0');
      expect(metricsLintProblems(text)).toEqual([]);
      const promtool = promtoolProblems(text);
      if (promtool !== undefined) expect(promtool).toEqual([]);

      for (const p of [port, metricsPort]) {
        expect(await accepts('127.0.0.1', p)).toBe(true);
        for (const other of otherLocalAddresses()) expect([other, p, await accepts(other, p)]).toEqual([other, p, false]);
      }
    } finally {
      await proc.kill('SIGKILL');
    }
  });

  test('HOST=0.0.0.0 (containers) and the database unreachable: /readyz is 503; both ports on every interface', async () => {
    const { proc, port, metricsPort } = await start(d, {
      HOST: '0.0.0.0',
      [d.databaseVariable]: 'postgresql://postgres@127.0.0.1:1/platform_unreachable',
      DATABASE_CONNECT_TIMEOUT_MS: '500',
    });
    try {
      expect((await json(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
      for (const p of [port, metricsPort]) {
        for (const other of otherLocalAddresses()) expect([other, p, await accepts(other, p)]).toEqual([other, p, true]);
      }
    } finally {
      await proc.kill('SIGKILL');
    }
  });
});
