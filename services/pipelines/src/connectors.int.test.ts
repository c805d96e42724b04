import { createServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import pg from 'pg';
import { z } from 'zod';
import { expectErrorBody, serviceClient, testDatabaseUrl, testIdentity, type ServiceClient } from '@platform/testing';
import type { WorkspaceId } from '@platform/core';
import { DESTINATIONS, SOURCES } from './connectors';
import { workspaceSchema } from './connectors/postgres';
import { startTestApp, testConnectorPolicy, type TestApp } from './test/app';

// GET /connectors and POST /connectors/check (contract section 14) on the real API.
const apps: TestApp[] = [];
let source: HttpServer;
let base: string;
const hanging: ServerResponse[] = [];
const schemas = new Set<string>();

async function client(options: Parameters<typeof startTestApp>[0] = {}): Promise<ServiceClient> {
  const app = await startTestApp({ webhooks: false, ...options });
  apps.push(app);
  const c = serviceClient('pipelines', app.server, testIdentity());
  schemas.add(workspaceSchema(c.identity.workspaceId as WorkspaceId));
  return c;
}

beforeAll(async () => {
  source = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/items') res.end(JSON.stringify({ data: { items: [{ id: 1 }, { id: 2 }] } }));
    else if (req.url === '/array') res.end(JSON.stringify([{ id: 1 }]));
    else if (req.url === '/object') res.end(JSON.stringify({ id: 1 }));
    else if (req.url === '/never') hanging.push(res);
    else {
      res.statusCode = 500;
      res.end('{"error":"pg: password authentication failed for user admin at 10.1.2.3"}');
    }
  });
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(source.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise<void>((resolve) => source.close(() => resolve()));
  for (const app of apps) await app.close();
  const pool = new pg.Pool({ connectionString: testDatabaseUrl('pipelines'), max: 1 });
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

describe('GET /connectors', () => {
  test('lists every connector with its kind, a description and the JSON Schema of its config, converted from the validating schema', async () => {
    const c = await client();
    const res = await c.get('/connectors').expect(200);
    expect(res.body.next_cursor).toBeNull();
    const byName = Object.fromEntries((res.body.data as { name: string }[]).map((entry) => [entry.name, entry]));
    expect(Object.keys(byName).sort()).toEqual(['http-json', 'postgres', 'sample']);
    for (const connector of [...Object.values(SOURCES), ...Object.values(DESTINATIONS)]) {
      expect(byName[connector.name]).toEqual({
        name: connector.name,
        kind: connector.kind,
        description: expect.stringMatching(/^[^\n]{10,}$/),
        config_schema: z.toJSONSchema(connector.config, { target: 'draft-2020-12', io: 'input' }),
      });
    }
  });

  test('an independent JSON Schema 2020-12 validator (ajv) accepts valid configs and rejects invalid ones', async () => {
    const c = await client();
    const entries = (await c.get('/connectors').expect(200)).body.data as { name: string; config_schema: object }[];
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    const validate = (name: string, config: unknown) => ajv.validate(entries.find((e) => e.name === name)!.config_schema, config);

    expect(entries.find((e) => e.name === 'postgres')!.config_schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema' });
    expect(validate('postgres', { table: 'sample_records' })).toBe(true);
    expect(validate('postgres', { table: 'Bad-Table' })).toBe(false);
    expect(validate('postgres', { table: 'ok', colour: 'red' })).toBe(false);
    expect(validate('postgres', {})).toBe(false);
    expect(validate('sample', {})).toBe(true);
    expect(validate('sample', { records: 100_001 })).toBe(false);
    expect(validate('http-json', { url: 'https://example.com/items', records_path: 'data.items' })).toBe(true);
    expect(validate('http-json', { url: 'https://example.com/items', extra: true })).toBe(false);
    expect(validate('http-json', { url: 'not a url' })).toBe(false);
  });
});

describe('POST /connectors/check', () => {
  test('sample always succeeds', async () => {
    const c = await client();
    const res = await c.post('/connectors/check', { kind: 'source', connector: 'sample', config: { records: 5 } }).expect(200);
    expect(res.body).toEqual({ status: 'succeeded', message: expect.any(String) });
  });

  test('http-json: an array at records_path (or the body itself) succeeds; anything else fails in the platform words', async () => {
    const c = await client();
    const check = (config: object) => c.post('/connectors/check', { kind: 'source', connector: 'http-json', config }).expect(200);
    expect((await check({ url: `${base}/items`, records_path: 'data.items' })).body).toEqual({
      status: 'succeeded',
      message: 'The source answered with an array of 2 records.',
    });
    expect((await check({ url: `${base}/array` })).body.status).toBe('succeeded');
    expect((await check({ url: `${base}/object` })).body).toEqual({ status: 'failed', message: 'the body of the source is not an array' });
    expect((await check({ url: `${base}/items`, records_path: 'data.nothing' })).body).toEqual({
      status: 'failed',
      message: 'records_path "data.nothing" of the source is not an array',
    });
    const broken = (await check({ url: `${base}/broken` })).body;
    expect(broken).toEqual({ status: 'failed', message: 'the source answered 500' });
    expect(JSON.stringify(broken)).not.toMatch(/password|admin|10\.1\.2\.3/);
    expect((await check({ url: 'http://127.0.0.1:1/closed' })).body).toEqual({ status: 'failed', message: 'cannot connect to the source' });
  });

  test('a source that never answers gives failed at the deadline (shortened here to 0.5 s)', async () => {
    const c = await client({ checkTimeoutMs: 500 });
    const res = await c.post('/connectors/check', { kind: 'source', connector: 'http-json', config: { url: `${base}/never` } }).expect(200);
    expect(res.body).toEqual({ status: 'failed', message: expect.stringMatching(/^the check did not finish/) });
  });

  test('a refused address (loopback, CONNECTORS_ALLOW_PRIVATE off) is a failed check that does not say what the name resolved to', async () => {
    const c = await client({ connectors: testConnectorPolicy({ allowPrivate: false, resolve: () => Promise.resolve(['10.9.8.7']) }) });
    const named = await c.post('/connectors/check', { kind: 'source', connector: 'http-json', config: { url: 'http://data.example.test/items' } }).expect(200);
    expect(named.body).toEqual({ status: 'failed', message: expect.stringMatching(/^config\.url /) });
    expect(JSON.stringify(named.body)).not.toContain('10.9.8.7');
    const literal = await c.post('/connectors/check', { kind: 'source', connector: 'http-json', config: { url: `${base}/items` } }).expect(200);
    expect(literal.body.status).toBe('failed');
    const db = await c
      .post('/connectors/check', {
        kind: 'destination',
        connector: 'postgres',
        config: { table: 't', connection_url: 'postgresql://u:p@db.example.test/tenant' },
      })
      .expect(200);
    expect(db.body).toEqual({ status: 'failed', message: expect.stringMatching(/^config\.connection_url /) });
    expect(JSON.stringify(db.body)).not.toContain('10.9.8.7');
  });

  test("postgres without connection_url connects and could create the table in the workspace's own schema, and leaves nothing behind (contract 20)", async () => {
    const c = await client();
    const schema = workspaceSchema(c.identity.workspaceId as WorkspaceId);
    const pool = new pg.Pool({ connectionString: testDatabaseUrl('pipelines'), max: 1 });
    const tableExists = async (table: string) =>
      (await pool.query('SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2', [schema, table])).rowCount === 1;
    try {
      const res = await c.post('/connectors/check', { kind: 'destination', connector: 'postgres', config: { table: 'checked_table' } }).expect(200);
      expect(res.body).toEqual({ status: 'succeeded', message: 'Connected; the table checked_table is ready.' });
      // The check created the table in a transaction it rolled back: the destination holds nothing more.
      expect(await tableExists('checked_table')).toBe(false);

      // A table that was there (a run wrote it) stays, with its rows.
      await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await pool.query(
        `CREATE TABLE "${schema}"."kept_table" ("id" text PRIMARY KEY, "data" jsonb NOT NULL, "synced_at" timestamptz(3) NOT NULL DEFAULT now())`,
      );
      await pool.query(`INSERT INTO "${schema}"."kept_table" ("id", "data") VALUES ('r1', '{}')`);
      const again = await c.post('/connectors/check', { kind: 'destination', connector: 'postgres', config: { table: 'kept_table' } }).expect(200);
      expect(again.body.status).toBe('succeeded');
      expect((await pool.query(`SELECT count(*)::int AS n FROM "${schema}"."kept_table"`)).rows[0]).toEqual({ n: 1 });
    } finally {
      await pool.end();
    }
  });

  test('postgres with connection_url: a database that does not answer is failed without the driver words; a platform database is 400', async () => {
    const c = await client();
    const missing = await c
      .post('/connectors/check', {
        kind: 'destination',
        connector: 'postgres',
        config: { table: 't', connection_url: 'postgresql://postgres@127.0.0.1:5432/no_such_database_xyz' },
      })
      .expect(200);
    expect(missing.body).toEqual({ status: 'failed', message: 'cannot connect to the destination' });
    const platform = new URL(testDatabaseUrl('pipelines'));
    const own = await c
      .post('/connectors/check', {
        kind: 'destination',
        connector: 'postgres',
        config: { table: 't', connection_url: `postgresql://postgres@127.0.0.1:5432${platform.pathname}` },
      })
      .expect(400);
    expect(expectErrorBody(own.body, 'invalid_request').errors).toEqual([
      expect.objectContaining({ in: 'body', field: 'config.connection_url', code: 'platform_database' }),
    ]);
  });

  test('invalid bodies are 400 with the codes of POST /pipelines, fields named from the check body', async () => {
    const c = await client();
    const fields = async (body: unknown) => {
      const res = await c.post('/connectors/check', body).expect(400);
      return (expectErrorBody(res.body, 'invalid_request').errors ?? []).map((e) => [e.field, e.code]);
    };
    expect(await fields({ kind: 'destination', connector: 'postgres', config: { table: 'Bad-Table' } })).toEqual([['config.table', 'invalid_format']]);
    expect(await fields({ kind: 'destination', connector: 'postgres', config: { table: 'ok', colour: 'red' } })).toEqual([['config.colour', 'unknown_field']]);
    expect(await fields({ kind: 'destination', connector: 'postgres' })).toEqual([['config', 'required']]);
    expect(await fields({ kind: 'destination', connector: 'postgres', config: {} })).toEqual([['config.table', 'required']]);
    expect(await fields({})).toEqual([
      ['kind', 'required'],
      ['connector', 'required'],
      ['config', 'required'],
    ]);
    expect(await fields({ kind: 'source', connector: 'postgres', config: {} })).toEqual([['connector', 'invalid_enum']]);
    expect(await fields({ kind: 'destination', connector: 'nope', config: {} })).toEqual([['connector', 'invalid_enum']]);
    expect(await fields({ kind: 'sink', connector: 'sample', config: {} })).toEqual([['kind', 'invalid_enum']]);
    expect(await fields({ connector: 'sample', config: {} })).toEqual([['kind', 'required']]);
    expect(await fields({ kind: 'source', connector: 'sample', config: {}, extra: 1 })).toEqual([['extra', 'unknown_field']]);
    expect(await fields({ kind: 'source', connector: 'http-json', config: { url: 'ftp://example.com/x' } })).toEqual([['config.url', expect.any(String)]]);
  });
});
