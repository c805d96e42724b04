// Contract section 20, the gateway's side of workspace quotas (real PostgreSQL, Redis and HTTP):
// GET|PATCH /admin/v1/workspaces/{id}/quotas, the usage asked of each service on its signed internal
// route, and the limits in force signed into every proxied request, on this instance and on another.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { MAX_QUOTA } from '@platform/admin-api';
import { INTERNAL_USAGE_PATH, InternalHeaders, type QuotaLimits } from '@platform/core';
import { expectErrorBody, testDatabaseUrl, uniqueName, waitFor } from '@platform/testing';
import { keyLookup } from './key-cache';
import type { WorkspaceUsage } from './quotas.service';
import { ADMIN_KEY_ID } from './service-usage';
import {
  ADMIN_TOKEN,
  allUpstreams,
  closeServer,
  createTestKey,
  DEAD_URL,
  listen,
  startEchoGateway,
  startEchoUpstream,
  startGateway,
  type EchoGateway,
  type EchoRecord,
  type GatewayOptions,
  type Reply,
  type TestGateway,
} from './test/gateway';
import { hashToken } from './tokens';

/** Platform defaults of this deployment (main reads them from WORKSPACE_QUOTA_*), unlike the contract's so the test tells them apart. */
const DEFAULTS: QuotaLimits = { pipelines: 50, scheduled_pipelines: 5, webhook_endpoints: 3, idempotency_bytes: 1_000_000 };
/** Far beyond every wait below: an instance that re-read its keys only this often could not pass. */
const CACHE_TTL_MS = 120_000;
/** Generous for a busy machine, and far below CACHE_TTL_MS. */
const DEADLINE_MS = 30_000;

const storedBytes = new Map<string, number>();
const gatewayOptions: GatewayOptions = { quotaDefaults: DEFAULTS, idempotencyBytesUsed: (workspaceId) => Promise.resolve(storedBytes.get(workspaceId) ?? 0) };

let gw: EchoGateway;
let sql: pg.Client;

beforeAll(async () => {
  gw = await startEchoGateway(gatewayOptions);
  sql = new pg.Client({ connectionString: testDatabaseUrl('gateway') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await gw.close();
});

const adminOn = (url: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply> =>
  gw.client.call(url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, body, headers });
const admin = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => adminOn(gw.url, method, path, body, headers);

async function newWorkspace(): Promise<string> {
  const res = await admin('POST', '/workspaces', { name: 'Quotas' });
  expect(res.status).toBe(201);
  return res.body.id;
}

const NOTHING_USED: WorkspaceUsage = {
  pipelines: 0,
  scheduled_pipelines: 0,
  webhook_endpoints: { events: 0, warehouse: 0, pipelines: 0 },
  idempotency_bytes: 0,
};
const UNSET = { pipelines: null, scheduled_pipelines: null, webhook_endpoints: null, idempotency_bytes: null };

const fieldsOf = (res: Reply): string[] => expectErrorBody(res.body, 'invalid_request').errors!.map((e) => `${e.in}:${e.field}:${e.code}`);

describe('GET /workspaces/{id}/quotas', () => {
  test('a workspace without values of its own: every platform default in force, and its usage from each service and the idempotency store', async () => {
    const ws = await newWorkspace();
    gw.upstream.usage.set(ws, { ...NOTHING_USED, pipelines: 7, scheduled_pipelines: 2, webhook_endpoints: { events: 1, warehouse: 0, pipelines: 4 } });
    storedBytes.set(ws, 4096);
    const res = await admin('GET', `/workspaces/${ws}/quotas`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...UNSET,
      limits: DEFAULTS,
      usage: { pipelines: 7, scheduled_pipelines: 2, webhook_endpoints: { events: 1, warehouse: 0, pipelines: 4 }, idempotency_bytes: 4096 },
    });
  });

  test("each service is asked on its internal route, signed for it, for this workspace only, with the admin's key id and the request's id", async () => {
    const ws = await newWorkspace();
    const requestId = `quotas-${randomUUID()}`;
    expect((await admin('GET', `/workspaces/${ws}/quotas`, undefined, { 'x-request-id': requestId })).status).toBe(200);
    const asked = gw.upstream.received.filter((r) => r.headers[InternalHeaders.workspaceId] === ws);
    expect(asked.map((r) => r.signed_for).sort()).toEqual(['events', 'pipelines', 'warehouse']);
    for (const record of asked) {
      expect(record).toMatchObject({ method: 'GET', url: INTERNAL_USAGE_PATH, signature_valid: true, body_bytes: 0 });
      expect(record.headers).toMatchObject({
        [InternalHeaders.keyId]: ADMIN_KEY_ID,
        [InternalHeaders.scopes]: '*',
        [InternalHeaders.requestId]: requestId,
      });
      expect(record.headers.authorization).toBeUndefined();
    }
  });

  test('an unknown workspace is 404, an id that is not a UUID 400; no service is asked', async () => {
    const before = gw.upstream.received.length;
    for (const method of ['GET', 'PATCH']) {
      const unknown = await admin(method, `/workspaces/${randomUUID()}/quotas`, method === 'PATCH' ? { pipelines: 1 } : undefined);
      expect(unknown.status).toBe(404);
      expectErrorBody(unknown.body, 'not_found');
      expect(fieldsOf(await admin(method, '/workspaces/nope/quotas', method === 'PATCH' ? {} : undefined))).toEqual(['path:id:invalid_format']);
    }
    expect(gw.upstream.received.length).toBe(before);
  });
});

describe('PATCH /workspaces/{id}/quotas', () => {
  test('changes only the quotas it names; null returns one to the default; {} changes nothing', async () => {
    const ws = await newWorkspace();
    const set = await admin('PATCH', `/workspaces/${ws}/quotas`, { pipelines: 10, idempotency_bytes: 2_048 });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      ...UNSET,
      pipelines: 10,
      idempotency_bytes: 2_048,
      limits: { ...DEFAULTS, pipelines: 10, idempotency_bytes: 2_048 },
      usage: NOTHING_USED,
    });
    const more = await admin('PATCH', `/workspaces/${ws}/quotas`, { scheduled_pipelines: 0, webhook_endpoints: MAX_QUOTA.webhook_endpoints });
    expect(more.body).toMatchObject({ pipelines: 10, scheduled_pipelines: 0, webhook_endpoints: MAX_QUOTA.webhook_endpoints, idempotency_bytes: 2_048 });
    const back = await admin('PATCH', `/workspaces/${ws}/quotas`, { pipelines: null, idempotency_bytes: MAX_QUOTA.idempotency_bytes });
    expect(back.body).toMatchObject({
      pipelines: null,
      idempotency_bytes: MAX_QUOTA.idempotency_bytes,
      limits: {
        pipelines: DEFAULTS.pipelines,
        scheduled_pipelines: 0,
        webhook_endpoints: MAX_QUOTA.webhook_endpoints,
        idempotency_bytes: MAX_QUOTA.idempotency_bytes,
      },
    });
    const nothing = await admin('PATCH', `/workspaces/${ws}/quotas`, {});
    expect(nothing.status).toBe(200);
    expect(nothing.body).toEqual(back.body);
    const noBody = await gw.client.call(gw.url, 'PATCH', `/admin/v1/workspaces/${ws}/quotas`, { token: ADMIN_TOKEN });
    expect({ status: noBody.status, body: noBody.body }).toEqual({ status: 200, body: back.body });
    expect((await admin('GET', `/workspaces/${ws}/quotas`)).body).toEqual(back.body);
  });

  test('a quota may be set below what the workspace has: nothing is removed, the usage stays above the limit', async () => {
    const ws = await newWorkspace();
    gw.upstream.usage.set(ws, { ...NOTHING_USED, pipelines: 12, webhook_endpoints: { events: 3, warehouse: 3, pipelines: 3 } });
    const res = await admin('PATCH', `/workspaces/${ws}/quotas`, { pipelines: 2, webhook_endpoints: 0 });
    expect(res.status).toBe(200);
    expect(res.body.limits).toMatchObject({ pipelines: 2, webhook_endpoints: 0 });
    expect(res.body.usage).toMatchObject({ pipelines: 12, webhook_endpoints: { events: 3, warehouse: 3, pipelines: 3 } });
  });

  test('bad bodies are 400 with the contract error body on each field, and change nothing', async () => {
    const ws = await newWorkspace();
    const path = `/workspaces/${ws}/quotas`;
    expect((await admin('PATCH', path, { pipelines: 5 })).status).toBe(200);
    expect(fieldsOf(await admin('PATCH', path, { pipelines: 1, webhooks: 1 }))).toEqual(['body:webhooks:unknown_field']);
    for (const [bad, code] of [
      ['10', 'invalid_type'],
      [1.5, 'invalid_type'],
      [-1, 'too_small'],
      [true, 'invalid_type'],
      [[], 'invalid_type'],
      [{}, 'invalid_type'],
    ] as const) {
      expect({ bad, fields: fieldsOf(await admin('PATCH', path, { scheduled_pipelines: bad })) }).toEqual({
        bad,
        fields: [`body:scheduled_pipelines:${code}`],
      });
    }
    expect(fieldsOf(await admin('PATCH', path, { pipelines: MAX_QUOTA.pipelines + 1, idempotency_bytes: MAX_QUOTA.idempotency_bytes + 1 }))).toEqual([
      'body:pipelines:too_large',
      'body:idempotency_bytes:too_large',
    ]);
    expect(fieldsOf(await admin('PATCH', path, [1]))).toEqual(['body::invalid_type']);
    expect((await admin('PATCH', path, '{"pipelines":', { 'content-type': 'application/json' })).status).toBe(400);
    expect((await admin('GET', path)).body).toMatchObject({ ...UNSET, pipelines: 5 });
  });

  test('logs every unrevoked key of the workspace in the key-change log, in its transaction; no key of another workspace', async () => {
    const ws = await newWorkspace();
    const [first, second, revoked] = [
      await createTestKey(gw.stores, { workspaceId: ws }),
      await createTestKey(gw.stores, { workspaceId: ws }),
      await createTestKey(gw.stores, { workspaceId: ws }),
    ];
    const other = await createTestKey(gw.stores);
    expect((await admin('DELETE', `/workspaces/${ws}/api-keys/${revoked.keyId}`)).status).toBe(204);
    const logged = async (keyId: string) => Number((await sql.query(`SELECT count(*) FROM "api_key_changes" WHERE "key_id" = $1`, [keyId])).rows[0].count);
    const counts = async () => {
      const out: number[] = [];
      for (const key of [first, second, revoked, other]) out.push(await logged(key.keyId));
      return out;
    };
    const before = await counts();
    expect((await admin('PATCH', `/workspaces/${ws}/quotas`, { pipelines: 3 })).status).toBe(200);
    expect((await counts()).map((n, i) => n - before[i]!)).toEqual([1, 1, 0, 0]);
  });
});

/** The quotas the echo service verified beside a proxied request of this token. */
async function signedQuotas(gateway: TestGateway, token: string): Promise<EchoRecord['quotas']> {
  const res = await gw.client.call(gateway.url, 'GET', '/pipelines/v3/pipelines', { token });
  expect(res.status).toBe(200);
  return (res.body as EchoRecord).quotas;
}

const serviceLimits = ({ pipelines, scheduled_pipelines, webhook_endpoints }: QuotaLimits) => ({ pipelines, scheduled_pipelines, webhook_endpoints });

describe('the limits in force reach the services', () => {
  test('every proxied request carries its workspace’s service quotas, signed; a change applies on this instance at once, and only to that workspace', async () => {
    const key = await createTestKey(gw.stores);
    const neighbour = await createTestKey(gw.stores);
    expect(await signedQuotas(gw, key.token)).toEqual(serviceLimits(DEFAULTS));
    expect((await admin('PATCH', `/workspaces/${key.workspaceId}/quotas`, { pipelines: 4, scheduled_pipelines: 1, idempotency_bytes: 0 })).status).toBe(200);
    expect(await signedQuotas(gw, key.token)).toEqual({ pipelines: 4, scheduled_pipelines: 1, webhook_endpoints: DEFAULTS.webhook_endpoints });
    expect(await signedQuotas(gw, neighbour.token)).toEqual(serviceLimits(DEFAULTS));
    // A key created after the change reads it with the key.
    const later = await createTestKey(gw.stores, { workspaceId: key.workspaceId });
    expect(await signedQuotas(gw, later.token)).toEqual({ pipelines: 4, scheduled_pipelines: 1, webhook_endpoints: DEFAULTS.webhook_endpoints });
  });

  test('a change made through one gateway instance reaches another that holds the key in its cache', async () => {
    const shared = {
      ...gatewayOptions,
      upstreams: allUpstreams(gw.upstream.url),
      redisPrefix: `test:${uniqueName('quotas')}:`,
      keyCache: { ttlMs: CACHE_TTL_MS },
    };
    const a = await startGateway(shared);
    const b = await startGateway(shared);
    try {
      const key = await createTestKey(a.stores);
      expect(await signedQuotas(b, key.token)).toEqual(serviceLimits(DEFAULTS));
      expect((await adminOn(a.url, 'PATCH', `/workspaces/${key.workspaceId}/quotas`, { webhook_endpoints: 9 })).status).toBe(200);
      const wanted = { ...serviceLimits(DEFAULTS), webhook_endpoints: 9 };
      await waitFor('B to sign the new limits', async () => JSON.stringify(await signedQuotas(b, key.token)) === JSON.stringify(wanted), DEADLINE_MS, 20);
      expect(await signedQuotas(a, key.token)).toEqual(wanted);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('the key cache reads the key and its quotas in force (idempotency_bytes too, for the gateway itself) in one lookup', async () => {
    const key = await createTestKey(gw.stores);
    const lookup = keyLookup(gw.stores.crossWorkspace, DEFAULTS);
    expect((await lookup(hashToken(key.token)))?.quotas).toEqual(DEFAULTS);
    await admin('PATCH', `/workspaces/${key.workspaceId}/quotas`, { idempotency_bytes: 777, pipelines: 0 });
    expect(await lookup(hashToken(key.token))).toMatchObject({
      id: key.keyId,
      workspaceId: key.workspaceId,
      quotas: { ...DEFAULTS, idempotency_bytes: 777, pipelines: 0 },
    });
  });
});

/** A stand-in service whose every answer is `status` with `body`. */
async function fixedAnswer(status: number, body: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end(body));
  return { url: await listen(server), close: () => closeServer(server) };
}

describe('a service that does not give its usage', () => {
  async function expectUnavailable(options: GatewayOptions, service: string): Promise<void> {
    const broken = await startGateway({ ...gatewayOptions, ...options });
    try {
      const ws = await newWorkspace();
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { pipelines: 1 }],
      ] as const) {
        const res = await adminOn(broken.url, method, `/workspaces/${ws}/quotas`, body);
        expect({ service, method, status: res.status }).toEqual({ service, method, status: 503 });
        expectErrorBody(res.body, 'temporarily_unavailable');
        expect(res.headers['retry-after']).toBe('1');
      }
      // The PATCH changed nothing.
      expect((await admin('GET', `/workspaces/${ws}/quotas`)).body).toMatchObject(UNSET);
    } finally {
      await broken.close();
    }
  }

  test('cannot be reached: 503 temporarily_unavailable, and a PATCH changes nothing', async () => {
    await expectUnavailable({ upstreams: { ...allUpstreams(gw.upstream.url), warehouse: DEAD_URL } }, 'warehouse');
  });

  test('answers later than the gateway timeout: 503', async () => {
    const slow = await startEchoUpstream({ delayMs: 3_000 });
    try {
      await expectUnavailable({ upstreams: { ...allUpstreams(gw.upstream.url), pipelines: slow.url }, upstreamTimeoutMs: 300 }, 'pipelines');
    } finally {
      await slow.close();
    }
  });

  test('answers an error, something that is not its usage, or no pipelines counts: 503, never a 500', async () => {
    for (const [service, status, body] of [
      ['events', 500, '{"error":{}}'],
      ['events', 401, '{"error":{}}'],
      ['warehouse', 200, 'not json'],
      ['warehouse', 200, '{"webhook_endpoints":-1}'],
      ['pipelines', 200, '{"webhook_endpoints":1}'],
    ] as const) {
      const answer = await fixedAnswer(status, body);
      try {
        await expectUnavailable({ upstreams: { ...allUpstreams(gw.upstream.url), [service]: answer.url } }, `${service} ${status} ${body}`);
      } finally {
        await answer.close();
      }
    }
  });

  test('the idempotency store cannot count: 503', async () => {
    await expectUnavailable({ upstreams: allUpstreams(gw.upstream.url), idempotencyBytesUsed: () => Promise.reject(new Error('redis away')) }, 'idempotency');
  });
});
