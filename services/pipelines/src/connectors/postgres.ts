import pg from 'pg';
import { z } from 'zod';
import { isTransientBackendError, type WorkspaceId } from '@platform/core';
import { ConnectorError, type DestinationConnector, type DestinationWriter, type ValidRecord } from './connector';

function isPostgresUrl(value: string): boolean {
  try {
    return ['postgres:', 'postgresql:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

export const PostgresConfig = z.strictObject({
  table: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must match ^[a-z_][a-z0-9_]{0,62}$'),
  connection_url: z
    .string()
    .max(2048)
    .refine(isPostgresUrl, { message: 'must be a postgres:// or postgresql:// URL', params: { code: 'invalid_format' } })
    .optional(),
});
export type PostgresConfig = z.output<typeof PostgresConfig>;

/**
 * In the pipelines database every workspace writes to its own schema, so two workspaces that
 * name the same table never share rows, and no table can shadow the service's own tables.
 */
export function workspaceSchema(workspaceId: WorkspaceId): string {
  return `ws_${workspaceId.replace(/-/g, '').toLowerCase()}`;
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

// Connection trouble, lack of resources, shutdowns, serialization failures and deadlocks pass.
const RETRYABLE_SQLSTATE = /^(08|53|57P|40001|40P01)/;

function destinationError(err: unknown, doing: string): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const sqlState = (err as { code?: unknown }).code;
  const retryable = isTransientBackendError(err) || (typeof sqlState === 'string' && RETRYABLE_SQLSTATE.test(sqlState));
  const detail = err instanceof Error ? err.message : String(err);
  return new ConnectorError('destination_error', `${doing}: ${detail}`, retryable, { cause: err });
}

function masked(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '****';
  for (const key of [...parsed.searchParams.keys()]) if (/password/i.test(key)) parsed.searchParams.set(key, '****');
  return parsed.toString();
}

/**
 * Creates the table when absent: `id text PRIMARY KEY, data jsonb, synced_at timestamptz`. An
 * advisory lock serialises concurrent creators (CREATE ... IF NOT EXISTS alone can still race).
 */
async function ensureTable(pool: pg.Pool, schema: string | null, table: string): Promise<string> {
  const target = schema ? `${quote(schema)}.${quote(table)}` : quote(table);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`pipelines-destination:${target}`]);
    if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${target} (
         "id" text PRIMARY KEY,
         "data" jsonb NOT NULL,
         "synced_at" timestamptz(3) NOT NULL DEFAULT now()
       )`,
    );
    await client.query('COMMIT');
    return target;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Upserts records by id into a table of the pipelines database or of the database at connection_url. */
export const postgresDestination: DestinationConnector<PostgresConfig> = {
  kind: 'destination',
  name: 'postgres',
  config: PostgresConfig,
  render: (config) => (config.connection_url === undefined ? config : { ...config, connection_url: masked(config.connection_url) }),
  async open(config, { workspaceId, runtime }): Promise<DestinationWriter> {
    const external = config.connection_url !== undefined;
    const pool = external ? new pg.Pool({ connectionString: config.connection_url, max: 2, connectionTimeoutMillis: 10_000 }) : runtime.defaultPool;
    if (external) pool.on('error', () => undefined); // an idle client's error resurfaces on the next query
    let target: string;
    try {
      target = await ensureTable(pool, external ? null : workspaceSchema(workspaceId), config.table);
    } catch (err) {
      if (external) await pool.end().catch(() => undefined);
      throw destinationError(err, `cannot create table ${config.table}`);
    }
    return {
      async write(records: ValidRecord[]): Promise<number> {
        // One statement per batch; a batch that names an id twice keeps the last record.
        const unique = [...new Map(records.map((r) => [r.id, r])).values()];
        if (unique.length === 0) return 0;
        try {
          await pool.query(
            `INSERT INTO ${target} ("id", "data", "synced_at")
             SELECT r->>'id', r->'data', now() FROM jsonb_array_elements($1::jsonb) AS r
             ON CONFLICT ("id") DO UPDATE SET "data" = EXCLUDED."data", "synced_at" = EXCLUDED."synced_at"`,
            [JSON.stringify(unique)],
          );
        } catch (err) {
          throw destinationError(err, `cannot write to ${config.table}`);
        }
        return unique.length;
      },
      async close() {
        if (external) await pool.end().catch(() => undefined);
      },
    };
  },
};
