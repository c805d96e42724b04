import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { z } from 'zod';
import { NonPublicAddressError, NOT_PUBLIC_MESSAGE, parseHost } from '@platform/address-guard';
import { isTransientBackendError, type WorkspaceId } from '@platform/core';
import {
  ConnectorError,
  failedCheck,
  type CheckResult,
  type ConfigProblem,
  type ConnectorPolicy,
  type ConnectorRuntime,
  type DestinationConnector,
  type DestinationWriter,
  type ValidRecord,
  type WriteGuard,
  RunNotHeldError,
} from './connector';

/** libpq's sslmode values, the one parameter a connection_url may carry. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
type SslMode = (typeof SSL_MODES)[number];

/** Where a connection_url points, read by the platform (not by pg, which would also honour PG* variables and URL parameters). */
export interface PostgresTarget {
  /** As written: a name, or an IP literal without brackets. */
  host: string;
  port: number;
  user: string;
  password: string;
  /** The database the server will open: the path, or the user name when the path is empty (as libpq does). */
  database: string;
  sslmode: SslMode | undefined;
}

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** A connection_url read strictly, or why it is refused (the `invalid_format` message). */
export function parseConnectionUrl(text: string): { target: PostgresTarget } | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'must be a postgres:// or postgresql:// URL' };
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return { problem: 'must be a postgres:// or postgresql:// URL' };
  // One host, written as a name or an IP address: no socket paths, host lists or percent-escapes.
  if (url.hostname === '' || parseHost(url.hostname).kind === 'invalid') return { problem: 'must name one host' };
  const user = decoded(url.username);
  if (!user) return { problem: 'must name a user' };
  const password = decoded(url.password);
  const path = decoded(url.pathname.replace(/^\//, ''));
  if (password === undefined || path === undefined || path.includes('/') || path.includes('\u0000') || user.includes('\u0000')) {
    return { problem: 'must be a URL of the form postgresql://user:password@host:port/database' };
  }
  if (url.hash !== '') return { problem: 'must not have a fragment' };
  const names = [...url.searchParams.keys()];
  if (names.some((name) => name !== 'sslmode') || names.length > 1) return { problem: 'may carry no parameter but sslmode' };
  const sslmode = url.searchParams.get('sslmode') ?? undefined;
  if (sslmode !== undefined && !(SSL_MODES as readonly string[]).includes(sslmode)) return { problem: `sslmode must be one of ${SSL_MODES.join(', ')}` };
  return {
    target: {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port === '' ? 5432 : Number(url.port),
      user,
      password: password ?? '',
      database: path === '' ? user : path,
      sslmode: sslmode as SslMode | undefined,
    },
  };
}

export const PostgresConfig = z.strictObject({
  table: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must match ^[a-z_][a-z0-9_]{0,62}$'),
  connection_url: z
    .string()
    .max(2048)
    .superRefine((value, ctx) => {
      const parsed = parseConnectionUrl(value);
      if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem, params: { code: 'invalid_format' } });
    })
    .optional(),
});
export type PostgresConfig = z.output<typeof PostgresConfig>;

/**
 * By name alone, whatever the host: the platform's server answers to many names and addresses
 * (localhost, 127.0.0.1, ::ffff:127.0.0.1, its service name, a pod address), so a host comparison
 * could always be walked around. A tenant's own database of the same name can be renamed.
 */
function namesPlatformDatabase(target: PostgresTarget, policy: ConnectorPolicy): boolean {
  return policy.platformDatabases.has(target.database.toLowerCase());
}

const PLATFORM_DATABASE_MESSAGE = 'must not name a database of the platform';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * In the pipelines database every workspace writes to its own schema, so two workspaces that
 * name the same table never share rows, and no table can shadow the service's own tables.
 */
export function workspaceSchema(workspaceId: WorkspaceId): string {
  // A uuid maps to one schema and back; anything else could collide with another workspace's.
  if (!UUID.test(workspaceId)) throw new Error('a workspace id is a uuid');
  return `ws_${workspaceId.replace(/-/g, '').toLowerCase()}`;
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

// Connection trouble, lack of resources, shutdowns, serialization failures and deadlocks pass.
const RETRYABLE_SQLSTATE = /^(08|53|57P|40001|40P01)/;

/** The run error for a driver failure: the platform's fixed words; the driver's text stays in the cause (logged, never shown). */
function destinationError(err: unknown, message: string): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const sqlState = (err as { code?: unknown } | null)?.code;
  const retryable = isTransientBackendError(err) || (typeof sqlState === 'string' && RETRYABLE_SQLSTATE.test(sqlState));
  return new ConnectorError('destination_error', message, retryable, { cause: err });
}

const CANNOT_CONNECT = 'cannot connect to the destination';
const CANNOT_CREATE = 'cannot create the destination table';
const CANNOT_WRITE = 'cannot write to the destination table';

function masked(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '****';
  // Configs stored before parameters were refused may still carry one.
  for (const key of [...parsed.searchParams.keys()]) if (/password/i.test(key)) parsed.searchParams.set(key, '****');
  return parsed.toString();
}

/** TLS as libpq's sslmode asks; the certificate is checked against the name in the URL, not the address connected to. */
function tlsOptions(target: PostgresTarget): false | ConnectionOptions {
  const servername = parseHost(target.host).kind === 'name' ? target.host : undefined;
  switch (target.sslmode) {
    case undefined:
    case 'disable':
    case 'allow':
      return false;
    // pg cannot fall back to plain text: prefer asks for TLS like require (no certificate check, as libpq without a root certificate).
    case 'prefer':
    case 'require':
      return { rejectUnauthorized: false, servername };
    case 'verify-ca':
      return { rejectUnauthorized: true, servername, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { rejectUnauthorized: true, servername };
  }
}

/**
 * A pool on the database at connection_url, connected to the address the guard checked. Every
 * setting is given here, so no URL parameter and no PG* variable of the worker can change the
 * host, database, user, password or TLS (the password as a function: an empty one would send pg to
 * PGPASSWORD and ~/.pgpass).
 */
async function externalPool(connectionUrl: string, policy: ConnectorPolicy): Promise<pg.Pool> {
  const parsed = parseConnectionUrl(connectionUrl);
  if ('problem' in parsed) throw new ConnectorError('destination_error', 'the stored postgres config is no longer valid; create the pipeline again', false);
  const { target } = parsed;
  if (namesPlatformDatabase(target, policy)) throw new ConnectorError('destination_error', `connection_url ${PLATFORM_DATABASE_MESSAGE}`, false);
  let address: string;
  try {
    address = (await policy.addressGuard.resolve(target.host))[0]!.address;
  } catch (err) {
    if (err instanceof NonPublicAddressError) throw new ConnectorError('destination_error', `connection_url ${NOT_PUBLIC_MESSAGE}`, false, { cause: err });
    throw new ConnectorError('destination_error', CANNOT_CONNECT, true, { cause: err });
  }
  const password = target.password;
  const pool = new pg.Pool({
    host: address,
    port: target.port,
    user: target.user,
    password: () => password,
    database: target.database,
    ssl: tlsOptions(target),
    application_name: 'platform-pipelines',
    client_encoding: 'UTF8',
    connectionTimeoutMillis: 10_000,
    max: 2,
  });
  pool.on('error', () => undefined); // an idle client's error resurfaces on the next query
  return pool;
}

/**
 * Creates the table when absent: `id text PRIMARY KEY, data jsonb, synced_at timestamptz`. An
 * advisory lock per schema and one per table serialise concurrent creators (CREATE ... IF NOT
 * EXISTS alone can still race: the second creator's insert into the catalog fails).
 */
async function ensureTable(pool: pg.Pool, schema: string | null, table: string, options: { keep: boolean } = { keep: true }): Promise<string> {
  const target = schema ? `${quote(schema)}.${quote(table)}` : quote(table);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw destinationError(err, CANNOT_CONNECT);
  }
  try {
    await client.query('BEGIN');
    // The schema's lock first (two tables of one new schema race on CREATE SCHEMA too), then the table's.
    if (schema) {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`pipelines-destination-schema:${quote(schema)}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`);
    }
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`pipelines-destination:${target}`]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${target} (
         "id" text PRIMARY KEY,
         "data" jsonb NOT NULL,
         "synced_at" timestamptz(3) NOT NULL DEFAULT now()
       )`,
    );
    // A check creates nothing that stays (contract section 20): its DDL is undone with the transaction.
    await client.query(options.keep ? 'COMMIT' : 'ROLLBACK');
    return target;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw destinationError(err, CANNOT_CREATE);
  } finally {
    client.release();
  }
}

/**
 * The batch in a transaction of its own that commits only while the run is held (WriteGuard): a
 * cancel or timeout committed first leaves it rolled back. An abort (the run ended, as seen by the
 * worker) ends the connection at once, so the server rolls back a statement still in flight (a
 * write stuck behind a lock never lands later).
 */
async function guardedWrite(pool: pg.Pool, statement: string, values: unknown[], guard: WriteGuard): Promise<void> {
  guard.signal.throwIfAborted();
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw destinationError(err, CANNOT_CONNECT);
  }
  let released = false;
  const release = (destroy?: Error) => {
    if (released) return;
    released = true;
    client.release(destroy);
  };
  const abandon = () => release(new Error('the run stopped: the write is abandoned'));
  guard.signal.addEventListener('abort', abandon, { once: true });
  try {
    await client.query('BEGIN');
    await client.query(statement, values);
    guard.signal.throwIfAborted();
    if (!(await guard.commitWhileHeld(async () => void (await client.query('COMMIT'))))) {
      await client.query('ROLLBACK');
      throw new RunNotHeldError('the run no longer belongs to this attempt; the batch was rolled back');
    }
  } catch (err) {
    if (!released) await client.query('ROLLBACK').catch(() => undefined);
    if (err instanceof RunNotHeldError || guard.signal.aborted) throw guard.signal.aborted ? (guard.signal.reason ?? err) : err;
    throw destinationError(err, CANNOT_WRITE);
  } finally {
    guard.signal.removeEventListener('abort', abandon);
    release();
  }
}

/**
 * Where a config writes: the database at connection_url (a pool of its own, ended by `release`), or
 * the workspace's own schema of the pipelines database. Without connection_url the table is always
 * qualified with the workspace's schema: no search_path involved.
 */
async function destinationOf(
  config: PostgresConfig,
  workspaceId: WorkspaceId,
  runtime: ConnectorRuntime,
): Promise<{ pool: pg.Pool; schema: string | null; release: () => Promise<void> }> {
  if (config.connection_url === undefined) return { pool: runtime.defaultPool, schema: workspaceSchema(workspaceId), release: () => Promise.resolve() };
  const pool = await externalPool(config.connection_url, runtime);
  return { pool, schema: null, release: () => pool.end().catch(() => undefined) };
}

/**
 * Upserts records by id into a table of the workspace's own schema in the pipelines database,
 * or into a table of the database at connection_url.
 */
export const postgresDestination: DestinationConnector<PostgresConfig> = {
  kind: 'destination',
  name: 'postgres',
  description:
    "Upserts records by id into a table (id, data jsonb, synced_at), created when absent: in the workspace's own schema of the platform's database, or in the database at connection_url.",
  config: PostgresConfig,
  render: (config) => (config.connection_url === undefined ? config : { ...config, connection_url: masked(config.connection_url) }),
  async verify(config, policy): Promise<ConfigProblem[]> {
    if (config.connection_url === undefined) return [];
    const parsed = parseConnectionUrl(config.connection_url);
    if ('problem' in parsed) return [{ field: 'connection_url', code: 'invalid_format', message: parsed.problem }];
    if (namesPlatformDatabase(parsed.target, policy)) return [{ field: 'connection_url', code: 'platform_database', message: PLATFORM_DATABASE_MESSAGE }];
    try {
      await policy.addressGuard.check(parsed.target.host);
      return [];
    } catch (err) {
      if (err instanceof NonPublicAddressError) return [{ field: 'connection_url', code: 'private_address', message: err.message }];
      throw err;
    }
  },
  async check(config, { workspaceId, runtime, signal }): Promise<CheckResult> {
    try {
      // As a run opens it: connects (to the address checked) and creates the table when absent, in a
      // transaction that is rolled back: nothing the check created is left in the destination.
      const destination = await destinationOf(config, workspaceId, runtime);
      try {
        await ensureTable(destination.pool, destination.schema, config.table, { keep: false });
      } finally {
        await destination.release();
      }
      return { status: 'succeeded', message: `Connected; the table ${config.table} is ready.` };
    } catch (err) {
      return failedCheck(err, signal);
    }
  },
  async open(config, { workspaceId, runtime }): Promise<DestinationWriter> {
    const { pool, schema, release } = await destinationOf(config, workspaceId, runtime);
    let target: string;
    try {
      target = await ensureTable(pool, schema, config.table);
    } catch (err) {
      await release();
      throw err;
    }
    return {
      async write(records: ValidRecord[], guard?: WriteGuard): Promise<number> {
        // One statement per batch; a batch that names an id twice keeps the last record.
        const unique = [...new Map(records.map((r) => [r.id, r])).values()];
        if (unique.length === 0) return 0;
        const upsert = `INSERT INTO ${target} ("id", "data", "synced_at")
             SELECT r->>'id', r->'data', now() FROM jsonb_array_elements($1::jsonb) AS r
             ON CONFLICT ("id") DO UPDATE SET "data" = EXCLUDED."data", "synced_at" = EXCLUDED."synced_at"`;
        const values = [JSON.stringify(unique)];
        if (!guard) {
          try {
            await pool.query(upsert, values);
          } catch (err) {
            throw destinationError(err, CANNOT_WRITE);
          }
          return unique.length;
        }
        await guardedWrite(pool, upsert, values, guard);
        return unique.length;
      },
      close: release,
    };
  },
};
