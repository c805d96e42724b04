import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { expectErrorBody, serviceClient, testDatabaseUrl, testIdentity, type ServiceClient } from '@platform/testing';
import { closeTestPool, createPipeline, destinationRows, ended, waitForRun, type PipelineBody, type RunBody } from './test/fixtures';
import { startTestApp, testConnectorPolicy, testQueue, type TestApp } from './test/app';
import { killAllWorkers, spawnWorker, type WorkerProcess } from './test/worker';

// Contract section 10, the postgres destination: a workspace reaches its own schema only; a
// connection_url reaches neither another workspace's data nor the platform's own databases, and
// a run's error never carries the driver's words. Real API, real worker process, real PostgreSQL.

const TEST_DATABASE = new URL(testDatabaseUrl('pipelines'));
const SCRATCH_DATABASE = `pipelines_destination_${process.pid}`;

/** A connection_url to `database` on the test PostgreSQL server (by default as its user, on its port), with `query` appended. */
function localUrl(database: string, query = '', options: { user?: string; port?: number } = {}): string {
  const url = new URL(TEST_DATABASE.toString());
  url.pathname = `/${database}`;
  if (options.user) url.username = options.user;
  if (options.port) url.port = String(options.port);
  return url.toString() + query;
}

const admin = new pg.Pool({ connectionString: localUrl('postgres'), max: 2 });
const stacks: { app: TestApp; worker: WorkerProcess }[] = [];

/** An API and a real worker on a queue of their own; `apiOptions.connectors` replaces the API's policy (private allowed). */
async function stack(
  workerEnv: Record<string, string> = {},
  apiOptions: Parameters<typeof startTestApp>[0] = {},
): Promise<{ app: TestApp; worker: WorkerProcess }> {
  const queue = testQueue('destinations');
  const worker = spawnWorker(queue, workerEnv);
  const app = await startTestApp({ ...apiOptions, queue });
  await worker.ready;
  const started = { app, worker };
  stacks.push(started);
  return started;
}

let main: { app: TestApp; worker: WorkerProcess };
beforeAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS "${SCRATCH_DATABASE}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${SCRATCH_DATABASE}"`);
  main = await stack();
});
afterAll(async () => {
  for (const { app, worker } of stacks) {
    await worker.kill('SIGKILL');
    await app.close();
  }
  await killAllWorkers();
  await closeTestPool();
  await admin.query(`DROP DATABASE IF EXISTS "${SCRATCH_DATABASE}" WITH (FORCE)`);
  await admin.end();
});

function client(app: TestApp = main.app): ServiceClient {
  return serviceClient('pipelines', app.server, testIdentity());
}

async function runToEnd(c: ServiceClient, pipelineId: string): Promise<RunBody> {
  const trigger = await c.post(`/pipelines/${pipelineId}/runs`, { trigger: 'manual' }).expect(202);
  return waitForRun(c, pipelineId, trigger.body.id, ended, 'the run to end');
}

function sampleInto(table: string, seed: number, records: number, connectionUrl?: string): PipelineBody {
  return {
    source: { connector: 'sample', config: { records, seed } },
    destination: { connector: 'postgres', config: connectionUrl === undefined ? { table } : { table, connection_url: connectionUrl } },
  };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function tableExists(database: string, qualified: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: localUrl(database) });
  await client.connect();
  try {
    return (await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [qualified])).rows[0].found as boolean;
  } finally {
    await client.end();
  }
}

test("two workspaces that name the same table never see each other's rows", async () => {
  const a = client();
  const table = `shared_orders_${process.pid}`;
  const b = client();
  const pa = await createPipeline(a, sampleInto(table, 1, 5));
  const pb = await createPipeline(b, sampleInto(table, 2, 3));
  expect(await runToEnd(a, pa.id)).toMatchObject({ status: 'succeeded', stats: { records_written: 5 } });
  expect(await runToEnd(b, pb.id)).toMatchObject({ status: 'succeeded', stats: { records_written: 3 } });
  expect((await destinationRows(a.identity.workspaceId, table)).ids).toEqual(['sample-1-1', 'sample-1-2', 'sample-1-3', 'sample-1-4', 'sample-1-5']);
  expect((await destinationRows(b.identity.workspaceId, table)).ids).toEqual(['sample-2-1', 'sample-2-2', 'sample-2-3']);
  // Nothing lands in the database's default schema either.
  expect(await tableExists(decodeURIComponent(TEST_DATABASE.pathname.slice(1)), `public.${table}`)).toBe(false);
});

test("the attack from the issue: options=-c search_path=ws_<other> in a connection_url is 400 and the other workspace's rows stay as they were", async () => {
  const victim = client();
  const attacker = client();
  const own = await createPipeline(victim, sampleInto('orders', 3, 2));
  expect(await runToEnd(victim, own.id)).toMatchObject({ status: 'succeeded' });
  const schema = `ws_${victim.identity.workspaceId.replace(/-/g, '')}`;
  for (const database of [decodeURIComponent(TEST_DATABASE.pathname.slice(1)), SCRATCH_DATABASE]) {
    for (const query of [
      `?options=-c%20search_path%3D${schema}`,
      `?options=-csearch_path=${schema}`,
      `?sslmode=disable&options=-c%20search_path%3D${schema}`,
      '?dbname=platform_gateway',
      '?host=127.0.0.1',
    ]) {
      const res = await attacker.post('/pipelines', { name: 'intruder', ...sampleInto('orders', 9, 50, localUrl(database, query)) }).expect(400);
      expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([
        { in: 'body', field: 'destination.config.connection_url', code: 'invalid_format', message: 'may carry no parameter but sslmode' },
      ]);
    }
  }
  expect((await destinationRows(victim.identity.workspaceId, 'orders')).ids).toEqual(['sample-3-1', 'sample-3-2']);
});

test('a connection_url naming a database of the platform is 400, even with private addresses allowed', async () => {
  const c = client();
  const testDatabase = decodeURIComponent(TEST_DATABASE.pathname.slice(1));
  const urls = [
    localUrl('platform_gateway'),
    localUrl(testDatabase),
    localUrl('platform_pipelines'),
    localUrl(testDatabase.toUpperCase()),
    'postgresql://platform_gateway@127.0.0.1:5432', // no path: libpq opens the database named like the user
    'postgresql://postgres@localhost/platform_events?sslmode=disable',
  ];
  for (const url of urls) {
    const res = await c.post('/pipelines', { name: 'intruder', ...sampleInto('api_keys_copy', 1, 1, url) }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([
      { in: 'body', field: 'destination.config.connection_url', code: 'platform_database', message: 'must not name a database of the platform' },
    ]);
  }
});

test("the run checks again: a stored connection_url to the platform's database fails the run, which creates nothing", async () => {
  // An API whose list of platform databases is empty (as before this rule) stores the pipeline;
  // the worker, with the default list plus its own database, refuses it when the run connects.
  const lax = await stack({}, { connectors: { ...testConnectorPolicy({ allowPrivate: true }), platformDatabases: new Set() } });
  const c = client(lax.app);
  const table = `intruder_${process.pid}`;
  const testDatabase = decodeURIComponent(TEST_DATABASE.pathname.slice(1));
  const pipeline = await createPipeline(c, sampleInto(table, 1, 3, localUrl(testDatabase)));
  const run = await runToEnd(c, pipeline.id);
  expect(run).toMatchObject({
    status: 'failed',
    attempts: 1,
    error: { code: 'destination_error', message: 'connection_url must not name a database of the platform' },
  });
  expect(await tableExists(testDatabase, `public.${table}`)).toBe(false);
});

describe("a destination that cannot be reached: the run error is the platform's words, the driver's are only logged", () => {
  test.each([
    ['a closed port', async () => localUrl(SCRATCH_DATABASE, '', { port: await closedPort() }), 'ECONNREFUSED'],
    ['a database that does not exist', async () => localUrl('no_such_database_x7'), 'database \\"no_such_database_x7\\" does not exist'],
    ['a role that does not exist', async () => localUrl(SCRATCH_DATABASE, '', { user: 'no_such_role_x7' }), 'role \\"no_such_role_x7\\" does not exist'],
  ])('%s', async (_what, url, driverText) => {
    const c = client();
    const pipeline = await createPipeline(c, sampleInto('unreachable', 1, 3, await url()));
    const run = await runToEnd(c, pipeline.id);
    // Exactly these words: no host, port, database, role or driver text.
    expect(run).toMatchObject({ status: 'failed', error: { code: 'destination_error', message: 'cannot connect to the destination' } });
    expect(Object.keys(run.error!)).toEqual(['code', 'message']);
    // The driver's own error is in the worker's log, for the operator.
    expect(main.worker.output()).toContain(driverText);
  });
});

test('a connection_url that passes every rule is written to, through the address that was checked', async () => {
  const c = client();
  const table = `synced_${process.pid}`;
  const pipeline = await createPipeline(c, sampleInto(table, 4, 7, localUrl(SCRATCH_DATABASE, '?sslmode=disable')));
  expect(await runToEnd(c, pipeline.id)).toMatchObject({ status: 'succeeded', error: null, stats: { records_written: 7 } });
  const scratch = new pg.Client({ connectionString: localUrl(SCRATCH_DATABASE) });
  await scratch.connect();
  try {
    expect((await scratch.query(`SELECT count(*)::int AS n FROM public."${table}"`)).rows[0].n).toBe(7);
  } finally {
    await scratch.end();
  }
});

describe('a worker that does not allow private addresses', () => {
  test("refuses a private destination and a private source when the run connects, with the platform's words", async () => {
    // The API allows them (it stores the pipeline); the worker is where the rule must hold again.
    const strict = await stack({ CONNECTORS_ALLOW_PRIVATE: 'false' });
    const c = client(strict.app);
    const toDestination = await createPipeline(c, sampleInto('private_target', 1, 3, localUrl(SCRATCH_DATABASE)));
    expect(await runToEnd(c, toDestination.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'destination_error', message: 'connection_url must be a public address' },
    });
    const fromSource = await createPipeline(c, { source: { connector: 'http-json', config: { url: 'http://localhost:9/items' } } });
    expect(await runToEnd(c, fromSource.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'source_error', message: 'the source URL must be a public address' },
    });
    expect(await tableExists(SCRATCH_DATABASE, 'public.private_target')).toBe(false);
  });

  test('an API that does not allow them refuses both on create (400 private_address)', async () => {
    const strictApi = await startTestApp({ connectors: testConnectorPolicy({ allowPrivate: false }) });
    try {
      const c = client(strictApi);
      const res = await c
        .post('/pipelines', {
          name: 'private',
          source: { connector: 'http-json', config: { url: 'http://[::ffff:7f00:1]:8080/items' } },
          destination: { connector: 'postgres', config: { table: 't', connection_url: 'postgresql://u:p@2130706433:5432/warehouse' } },
        })
        .expect(400);
      expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([
        { in: 'body', field: 'source.config.url', code: 'private_address', message: 'must be a public address' },
        { in: 'body', field: 'destination.config.connection_url', code: 'private_address', message: 'must be a public address' },
      ]);
    } finally {
      await strictApi.close();
    }
  });
});
