import { randomUUID } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import {
  bodySha256,
  DEFAULT_SERVICE_QUOTA_LIMITS,
  migrate,
  serviceSigningKey,
  signedIdentityHeaders,
  type ServiceName,
  type ServiceQuotaLimits,
} from '@platform/core';
import { TEST_INTERNAL_SECRET } from './test-env';

/** Creates the database if needed and applies the service's migrations (jest globalSetup). */
export async function prepareTestDatabase(url: string, migrationsDir: string): Promise<void> {
  await migrate(url, migrationsDir);
}

/** A fresh identity for one test: its own workspace, so tests never see each other's data. */
export function testIdentity(scopes: readonly string[] | null = null): { workspaceId: string; keyId: string; scopes: readonly string[] | null } {
  return { workspaceId: randomUUID(), keyId: randomUUID(), scopes };
}

/**
 * Headers the gateway would add for one service, for calling that service directly in tests;
 * `quotas`: the workspace's quotas in force (those left out: the contract's defaults).
 */
export function gatewayHeaders(
  service: ServiceName,
  identity: { workspaceId: string; keyId: string; scopes: readonly string[] | null },
  method: string,
  pathAndQuery: string,
  options: { body?: string | Buffer; requestId?: string; secret?: string; quotas?: Partial<ServiceQuotaLimits> } = {},
): Record<string, string> {
  return signedIdentityHeaders(serviceSigningKey(options.secret ?? TEST_INTERNAL_SECRET, service), {
    workspaceId: identity.workspaceId,
    keyId: identity.keyId,
    scopes: identity.scopes,
    method,
    pathAndQuery,
    requestId: options.requestId ?? randomUUID(),
    quotas: { ...DEFAULT_SERVICE_QUOTA_LIMITS, ...options.quotas },
    bodySha256: bodySha256(options.body),
  });
}

interface RuntimeField {
  name: string;
  kind: string;
  type: string;
  dbName?: string | null;
}
interface RuntimeDataModel {
  models: Record<string, { dbName: string | null; fields: RuntimeField[] }>;
}

const COMPATIBLE_TYPES: Record<string, string[]> = {
  String: ['text', 'uuid', 'character varying'],
  Int: ['integer'],
  BigInt: ['bigint'],
  Boolean: ['boolean'],
  DateTime: ['timestamp with time zone', 'timestamp without time zone'],
  Json: ['jsonb', 'json'],
  Float: ['double precision'],
  Decimal: ['numeric'],
};

const ARRAY_ELEMENT_TYPES: Record<string, string> = {
  _text: 'text',
  _uuid: 'uuid',
  _varchar: 'character varying',
  _int4: 'integer',
  _int8: 'bigint',
  _bool: 'boolean',
};

/**
 * Lists every difference between the Prisma client's data model and the migrated database:
 * a missing table, a missing or extra column, or a column of an incompatible type.
 * An empty list means schema.prisma and the SQL migrations agree.
 */
export async function schemaDifferences(prismaClient: unknown, databaseUrl: string): Promise<string[]> {
  const model = (prismaClient as { _runtimeDataModel?: RuntimeDataModel })._runtimeDataModel;
  if (!model) throw new Error('the Prisma client exposes no runtime data model');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string; udt_name: string }>(
      `SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const columns = new Map<string, Map<string, string>>();
    for (const row of rows) {
      if (!columns.has(row.table_name)) columns.set(row.table_name, new Map());
      // The runtime data model does not say which fields are lists: an array column is judged by its element type.
      const type = row.data_type === 'ARRAY' ? (ARRAY_ELEMENT_TYPES[row.udt_name] ?? row.udt_name) : row.data_type;
      columns.get(row.table_name)!.set(row.column_name, type);
    }
    const problems: string[] = [];
    for (const [name, { dbName, fields }] of Object.entries(model.models)) {
      const table = dbName ?? name;
      const actual = columns.get(table);
      if (!actual) {
        problems.push(`table ${table} (model ${name}) is missing`);
        continue;
      }
      const expected = new Set<string>();
      for (const field of fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum')) {
        const column = field.dbName ?? field.name;
        expected.add(column);
        const type = actual.get(column);
        if (!type) problems.push(`${table}.${column} (${name}.${field.name}) is missing`);
        else if (field.kind === 'scalar' && !(COMPATIBLE_TYPES[field.type] ?? []).includes(type)) {
          problems.push(`${table}.${column} is ${type}, the schema says ${field.type}`);
        }
      }
      for (const column of actual.keys()) if (!expected.has(column)) problems.push(`${table}.${column} is not in schema.prisma`);
    }
    return problems;
  } finally {
    await client.end();
  }
}

type Target = Parameters<typeof request>[0];
/** `quotas`: the workspace's quotas the gateway signs beside the identity (those left out: the contract's defaults). */
type Identity = { workspaceId: string; keyId: string; scopes: readonly string[] | null; quotas?: Partial<ServiceQuotaLimits> };

/** supertest calls to a service as the gateway would make them, signed for one identity (and the exact body bytes sent). */
export function serviceClient(service: ServiceName, target: Target, identity: Identity, secret = TEST_INTERNAL_SECRET) {
  const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown, headers: Record<string, string> = {}): request.Test => {
    const raw = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const signed = gatewayHeaders(service, identity, method.toUpperCase(), path, {
      body: raw,
      requestId: headers['x-request-id'],
      secret,
      quotas: identity.quotas,
    });
    let req = request(target)[method](path).set(signed).set(headers);
    if (raw !== undefined) req = req.set('content-type', headers['content-type'] ?? 'application/json').send(raw);
    return req;
  };
  return {
    identity,
    get: (path: string, headers?: Record<string, string>) => call('get', path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call('post', path, body, headers),
    patch: (path: string, body?: unknown, headers?: Record<string, string>) => call('patch', path, body, headers),
    delete: (path: string, headers?: Record<string, string>) => call('delete', path, undefined, headers),
  };
}
export type ServiceClient = ReturnType<typeof serviceClient>;

/** Asserts the contract's error body and returns it, for further checks. */
export function expectErrorBody(
  body: unknown,
  code: string,
): { code: string; message: string; errors?: { in: string; field: string; code: string; message: string }[]; request_id: string; [k: string]: unknown } {
  const error = (body as { error?: Record<string, unknown> }).error;
  if (!error || error.code !== code || typeof error.message !== 'string' || typeof error.request_id !== 'string') {
    throw new Error(`expected an error body with code ${code}, got ${JSON.stringify(body)}`);
  }
  return error as ReturnType<typeof expectErrorBody>;
}
export * from './test-env';
export * from './receiver';
export * from './otlp-receiver';
export * from './wait';
export * from './stats';
export * from './tcp-proxy';
export * from './metrics';
export * from './half-sent-post';
export * from './platform';
export * from './processes';
export * from './openapi';
export * from './bad-input';
export * from './redis';
export * from './service-app';
export * from './redis-processes';
export * from './redis-cluster';
export * from './redis-sentinel';
export * from './balancer';
export * from './pgbouncer';
export * from './fleet';
export * from './migration-database';
