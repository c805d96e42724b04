import http, { type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import {
  bodySha256,
  createLogger,
  DEFAULT_QUOTA_LIMITS,
  INTERNAL_USAGE_PATH,
  InternalHeaders,
  parseQuotasHeader,
  serviceSigningKey,
  verifyInternalSignature,
  verifyQuotasSignature,
  type Logger,
  type RedisConnection,
  type RedisTarget,
  type ServiceName,
  type ServiceQuotaLimits,
  type ServiceUsage,
  type WorkspaceId,
} from '@platform/core';
import { TEST_INTERNAL_SECRET, TEST_REDIS_COMMAND_TIMEOUT_MS, testDatabaseUrl, testRedisUrl, uniqueName, waitFor } from '@platform/testing';
import { createApp, type GatewayApp, type GatewayDeps } from '../app';
import { createDatabase, type Database } from '../database';
import { createGatewayServer } from '../server';
import { gatewayStores, type GatewayStores, type RateLimits } from '../keys.store';
import { createApiKey } from '../keys.service';
import { keyChangeChannel } from '../key-changes';
import type { Upstreams } from '../proxy';
import type { WorkspaceUsage } from '../quotas.service';
import { closeRedis, createRedis, createSubscriber } from '../redis';
import { generateToken, hashToken, tokenPrefix } from '../tokens';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
/** Nothing listens here: connections are refused at once. */
export const DEAD_URL = 'http://127.0.0.1:1';
export const DEAD_REDIS_URL = 'redis://127.0.0.1:1';

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface EchoRecord {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  body_bytes: number;
  signature_valid: boolean;
  /** The service whose derived key the signature verifies with; null when none does. */
  signed_for: ServiceName | null;
  /** The quotas signed beside the request (`x-platform-quotas`, its MAC verified as a service does); null when absent or forged. */
  quotas: ServiceQuotaLimits | null;
}

const SERVICE_KEYS = (['events', 'warehouse', 'pipelines'] as const).map((service) => [service, serviceSigningKey(TEST_INTERNAL_SECRET, service)] as const);

/** The service a request was signed for, as a service would verify it (core's verifyInternalSignature). */
function signedFor(req: http.IncomingMessage, body: Buffer): ServiceName | null {
  const header = (name: string): string => (req.headers[name] as string | undefined) ?? '';
  const signed = {
    method: req.method!,
    pathAndQuery: req.url!,
    workspaceId: header(InternalHeaders.workspaceId),
    keyId: header(InternalHeaders.keyId),
    scopes: header(InternalHeaders.scopes),
    requestId: header(InternalHeaders.requestId),
    bodySha256: bodySha256(body),
  };
  const found = SERVICE_KEYS.find(([, key]) => verifyInternalSignature(key, header(InternalHeaders.timestamp), header(InternalHeaders.signature), signed));
  return found ? found[0] : null;
}

/** The quotas signed for `service` beside the request, verified as a service's requireGatewaySignature does. */
function signedQuotas(req: http.IncomingMessage, service: ServiceName | null): ServiceQuotaLimits | null {
  const value = req.headers[InternalHeaders.quotas];
  const mac = req.headers[InternalHeaders.quotasSignature];
  const signature = req.headers[InternalHeaders.signature];
  if (service === null || typeof value !== 'string' || typeof mac !== 'string' || typeof signature !== 'string') return null;
  const key = SERVICE_KEYS.find(([name]) => name === service)![1];
  return verifyQuotasSignature(key, signature, value, mac) ? (parseQuotasHeader(value) ?? null) : null;
}

/** What a service's internal usage route answers for a workspace's usage: its own counts only. */
function serviceUsageAnswer(service: ServiceName, usage: WorkspaceUsage | undefined): ServiceUsage {
  const webhookEndpoints = usage?.webhook_endpoints[service] ?? 0;
  if (service !== 'pipelines') return { webhook_endpoints: webhookEndpoints };
  return { pipelines: usage?.pipelines ?? 0, scheduled_pipelines: usage?.scheduled_pipelines ?? 0, webhook_endpoints: webhookEndpoints };
}

export interface EchoUpstream {
  url: string;
  received: EchoRecord[];
  /** What its internal usage route counts for a workspace (each service answers its own part); a workspace not set has nothing. */
  usage: Map<string, WorkspaceUsage>;
  close(): Promise<void>;
}

/**
 * A stand-in service: refuses requests without a valid gateway signature (as services do, with
 * core's verifyInternalSignature) and answers with what it received. `?status=N` picks the status,
 * `?delay_ms=N` delays the answer, `?location=L` adds a Location header. GET INTERNAL_USAGE_PATH
 * answers the signed workspace's counts from `usage`, for the service the request was signed for.
 */
export async function startEchoUpstream(options: { delayMs?: number } = {}): Promise<EchoUpstream> {
  const received: EchoRecord[] = [];
  const usage = new Map<string, WorkspaceUsage>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const service = signedFor(req, body);
      const record: EchoRecord = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body_bytes: chunks.reduce((n, c) => n + c.length, 0),
        body: body.toString('utf8').slice(0, 10_000),
        signature_valid: service !== null,
        signed_for: service,
        quotas: signedQuotas(req, service),
      };
      received.push(record);
      const query = new URL(req.url!, 'http://x').searchParams;
      const usageOf = (): ServiceUsage => serviceUsageAnswer(service!, usage.get(req.headers[InternalHeaders.workspaceId] as string));
      const respond = (): void => {
        if (res.destroyed) return;
        const status = record.signature_valid ? Number(query.get('status') ?? 200) : 401;
        const payload = JSON.stringify(record.signature_valid && req.method === 'GET' && req.url === INTERNAL_USAGE_PATH ? usageOf() : record);
        res.writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(payload),
          'x-upstream': 'echo',
          'x-request-id': 'upstream-must-not-win',
          'keep-alive': 'timeout=65',
          ...(query.has('location') ? { location: query.get('location')! } : {}),
        });
        res.end(payload);
      };
      const delayMs = Number(query.get('delay_ms') ?? options.delayMs ?? 0);
      // Unref'd: a delayed answer nobody waits for any more keeps no test process alive.
      if (delayMs > 0) setTimeout(respond, delayMs).unref();
      else respond();
    });
  });
  const url = await listen(server);
  return { url, received, usage, close: () => closeServer(server) };
}

export function allUpstreams(url: string): Upstreams {
  return { events: url, warehouse: url, pipelines: url };
}

export interface GatewayOptions extends Partial<
  Pick<
    GatewayDeps,
    | 'limits'
    | 'upstreamTimeoutMs'
    | 'keyCache'
    | 'keyChanges'
    | 'activityFlushMs'
    | 'rateLimitWindowMs'
    | 'consoleDir'
    | 'metrics'
    | 'idempotencyRecordTtlMs'
    | 'quotaDefaults'
    | 'maxApiKeys'
    | 'idempotencyBytesUsed'
  >
> {
  upstreams?: Upstreams;
  /** The platform default idempotency_bytes quota (a shorthand for quotaDefaults.idempotency_bytes). */
  idempotencyBytes?: number;
  redisUrl?: string;
  /** Another topology than one server (a RedisCluster launcher's nodes); wins over `redisUrl`. */
  redisTarget?: RedisTarget;
  /** Wait until the instance listens for key changes on Redis (default: when `redisUrl` is the test Redis). */
  awaitSubscription?: boolean;
  /** The server's slow-client limits (main's GATEWAY_HEADERS_TIMEOUT_MS / GATEWAY_REQUEST_TIMEOUT_MS). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** The command connection's timeout (main's REDIS_COMMAND_TIMEOUT_MS); default TEST_REDIS_COMMAND_TIMEOUT_MS. */
  redisCommandTimeoutMs?: number;
  /** Share a prefix to make several instances one deployment; a fresh one otherwise. */
  redisPrefix?: string;
  /** The gateway's logger (a test that reads the log lines passes its own); silent by default. */
  logger?: Logger;
}

export interface TestGateway {
  url: string;
  app: GatewayApp;
  db: Database;
  stores: GatewayStores;
  redis: RedisConnection;
  redisPrefix: string;
  close(): Promise<void>;
}

/** A gateway instance on an ephemeral port, on the test database and real (or deliberately dead) Redis. */
export async function startGateway(options: GatewayOptions = {}): Promise<TestGateway> {
  const logger = options.logger ?? createLogger('gateway-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const db = createDatabase(testDatabaseUrl('gateway'));
  const redisUrl = options.redisTarget ?? options.redisUrl ?? testRedisUrl();
  const redis = createRedis(redisUrl, logger, 'gateway', options.redisCommandTimeoutMs ?? TEST_REDIS_COMMAND_TIMEOUT_MS);
  const subscriber = createSubscriber(redisUrl, logger);
  const redisPrefix = options.redisPrefix ?? `test:${uniqueName('gw')}:`;
  const channel = keyChangeChannel(redisPrefix);
  const awaitSubscription = options.awaitSubscription ?? (options.redisUrl === undefined && options.redisTarget === undefined);
  let subscribersBefore = 0;
  if (awaitSubscription) {
    await Promise.all([readyOrFail(redis), readyOrFail(subscriber)]);
    // Retried: one slow answer on a busy machine can pass the command connection's timeout.
    subscribersBefore = await waitFor('the subscriber count', async () => Number((await redis.pubsub('NUMSUB', channel))[1]), 60_000, 20);
  }
  const stores = gatewayStores(db);
  const app = createApp({
    stores,
    redis,
    subscriber,
    logger,
    adminToken: ADMIN_TOKEN,
    internalSecret: TEST_INTERNAL_SECRET,
    upstreams: options.upstreams ?? allUpstreams(DEAD_URL),
    upstreamTimeoutMs: options.upstreamTimeoutMs ?? 5_000,
    redisPrefix,
    limits: options.limits,
    keyCache: options.keyCache,
    keyChanges: options.keyChanges,
    activityFlushMs: options.activityFlushMs,
    rateLimitWindowMs: options.rateLimitWindowMs,
    idempotencyRecordTtlMs: options.idempotencyRecordTtlMs,
    consoleDir: options.consoleDir,
    metrics: options.metrics,
    idempotencyBytesUsed: options.idempotencyBytesUsed,
    maxApiKeys: options.maxApiKeys,
    quotaDefaults:
      options.idempotencyBytes === undefined
        ? options.quotaDefaults
        : { ...(options.quotaDefaults ?? DEFAULT_QUOTA_LIMITS), idempotency_bytes: options.idempotencyBytes },
  });
  // As main does: the first Prisma query stalls the event loop while the client loads.
  await db.$queryRaw`SELECT 1`;
  const server = createGatewayServer(app, { headersTimeoutMs: options.headersTimeoutMs ?? 10_000, requestTimeoutMs: options.requestTimeoutMs ?? 30_000 });
  const url = await listen(server);
  // Revocations reach this instance only once it listens.
  if (awaitSubscription)
    await waitFor('the revocation subscription', async () => Number((await redis.pubsub('NUMSUB', channel))[1]) > subscribersBefore, 60_000, 20);
  return {
    url,
    app,
    db,
    stores,
    redis,
    redisPrefix,
    close: async () => {
      await closeServer(server);
      await app.close();
      await db.$disconnect();
      await Promise.all([closeRedis(subscriber), closeRedis(redis)]);
    },
  };
}

async function readyOrFail(redis: RedisConnection): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', resolve);
    setTimeout(() => reject(new Error('test redis is not reachable')), 3_000).unref();
  });
}

/** A test gateway whose every upstream is one echo server, with a client; `close()` stops all three. */
export interface EchoGateway extends TestGateway {
  upstream: EchoUpstream;
  client: HttpClient;
}

/** Starts an echo upstream, a gateway in front of it for every service, and a client for both. */
export async function startEchoGateway(options: Omit<GatewayOptions, 'upstreams'> = {}): Promise<EchoGateway> {
  const upstream = await startEchoUpstream();
  const gateway = await startGateway({ ...options, upstreams: allUpstreams(upstream.url) }).catch(async (err: unknown) => {
    await upstream.close();
    throw err;
  });
  const client = httpClient();
  return {
    ...gateway,
    upstream,
    client,
    close: async () => {
      await client.close();
      await gateway.close();
      await upstream.close();
    },
  };
}

export interface TestKey {
  token: string;
  keyId: string;
  workspaceId: WorkspaceId;
}

/**
 * A new workspace with one key, made with the domain functions (or, for an already expired key, the
 * store); not counted against the API keys limit (a test of the limit creates its keys through the admin API).
 */
export async function createTestKey(
  stores: GatewayStores,
  options: { scopes?: string[] | null; expiresAt?: Date | null; workspaceId?: string; rateLimits?: RateLimits | null } = {},
): Promise<TestKey> {
  const workspaceId = (options.workspaceId as WorkspaceId | undefined) ?? (await stores.crossWorkspace.createWorkspace(uniqueName('ws'))).id;
  if (options.expiresAt && options.expiresAt.getTime() <= Date.now()) {
    const token = generateToken();
    const row = { name: 'expired', scopes: options.scopes ?? null, tokenHash: hashToken(token), tokenPrefix: tokenPrefix(token), expiresAt: options.expiresAt };
    const created = await stores.keys.createApiKey(workspaceId, { ...row, rateLimits: null }, null);
    if (created.kind !== 'created') throw new Error('a key not counted against the limit was refused');
    return { token, keyId: created.key.id, workspaceId };
  }
  const { key, token } = await createApiKey(
    stores.keys,
    workspaceId,
    { name: 'test', scopes: options.scopes ?? null, expiresAt: options.expiresAt ?? null, rateLimits: options.rateLimits ?? null },
    null,
  );
  return { token, keyId: key.id, workspaceId };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** An HTTP client with its own connection pool (closed by `close`). */
export function httpClient() {
  const agent = new Agent({ connections: 64 });
  async function call(
    base: string,
    method: string,
    path: string,
    options: { token?: string; headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(`${base}${path}`, { method: method as 'GET', headers, body, dispatcher: agent });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  }
  return { call, close: () => agent.close() };
}
export type HttpClient = ReturnType<typeof httpClient>;
