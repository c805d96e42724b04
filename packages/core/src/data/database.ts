import pg from 'pg';
import { z } from 'zod';

/**
 * How long a deployable waits on PostgreSQL. Without bounds, a database that stops answering
 * (a network partition, not a refused connection) holds each request and its pooled connection
 * until TCP gives up, minutes later; with them the request fails as a 503 and the pool moves on.
 */
export const DatabaseTimeoutsConfig = z.object({
  /** Opening a connection (TCP + startup) longer than this fails. */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** A query without an answer for this long fails client-side (the server may still finish it). */
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
});
export type DatabaseTimeoutsConfig = z.infer<typeof DatabaseTimeoutsConfig>;

/**
 * The size of a process's connection pool and how long a query waits for one of its connections
 * (contract section 17): behind a transaction-mode pooler every process's pool must be bounded, and
 * a request that gets no connection in time is a 503, never a hang.
 */
export const DatabasePoolConfig = z.object({
  /** Connections one database client of this process holds at most (node-postgres pool `max`). */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1_000).default(10),
  /** A query waiting this long for a connection of the pool (a free one, or a new one opening) fails: 503 with Retry-After: 1. */
  DATABASE_POOL_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
});
export type DatabasePoolConfig = z.infer<typeof DatabasePoolConfig>;

/** Every DATABASE_* variable a process reads (CommonConfig carries them). */
export const DatabaseConfig = DatabaseTimeoutsConfig.extend(DatabasePoolConfig.shape);
export type DatabaseConfig = z.infer<typeof DatabaseConfig>;

const DATABASE_DEFAULTS: DatabaseConfig = DatabaseConfig.parse({});

/**
 * A node-postgres Client whose own handshake timer is `connectTimeoutMs`, whatever the pool says.
 * The options are copied with their descriptors: pg-pool hides `password` as a non-enumerable
 * property, which a spread would drop (pg would then fall back to PGPASSWORD and ~/.pgpass).
 */
function clientWithConnectTimeout(connectTimeoutMs: number): typeof pg.Client {
  return class BoundedConnectClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      const options: pg.ClientConfig =
        typeof config === 'string' ? { connectionString: config } : Object.defineProperties({}, Object.getOwnPropertyDescriptors(config ?? {}));
      options.connectionTimeoutMillis = connectTimeoutMs;
      super(options);
    }
  };
}

/**
 * node-postgres pool settings (as given to @prisma/adapter-pg) for the configured pool and timeouts;
 * a variable left out takes its default.
 *
 * pg-pool 3.x has one knob for two waits, `connectionTimeoutMillis` (node_modules/pg-pool/index.js):
 * `connect()` on a full pool queues the caller with a timer of that length and fails it with
 * "timeout exceeded when trying to connect"; `newClient()` arms the same length around a new
 * connection's handshake ("Connection terminated due to connection timeout"), and the Client it
 * builds from the pool's options arms it a third time (pg's Client reads `connectionTimeoutMillis`).
 * So the pool gets DATABASE_POOL_TIMEOUT_MS, the whole wait of a query for a connection, queued or
 * opening, and each Client gets DATABASE_CONNECT_TIMEOUT_MS for its handshake: an opening connection
 * gives up at the smaller of the two, a queued query at DATABASE_POOL_TIMEOUT_MS.
 */
export function databasePoolSettings(config: Partial<DatabaseConfig> = {}) {
  const settings = { ...DATABASE_DEFAULTS, ...definedOnly(config) };
  return {
    max: settings.DATABASE_POOL_MAX,
    connectionTimeoutMillis: settings.DATABASE_POOL_TIMEOUT_MS,
    Client: clientWithConnectTimeout(settings.DATABASE_CONNECT_TIMEOUT_MS),
    query_timeout: settings.DATABASE_QUERY_TIMEOUT_MS,
    // Lets the kernel notice a dead peer on an idle pooled connection.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/**
 * Prisma's default options of an interactive transaction for the configured pool: it waits for its
 * connection as long as any query does. Prisma's own default `maxWait` (2 s) would give up first,
 * with P2028, and leave DATABASE_POOL_TIMEOUT_MS without effect on transactions.
 */
export function databaseTransactionOptions(config: Partial<DatabaseConfig> = {}): { maxWait: number } {
  return { maxWait: { ...DATABASE_DEFAULTS, ...definedOnly(config) }.DATABASE_POOL_TIMEOUT_MS };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([key, v]) => v !== undefined && key in DATABASE_DEFAULTS)) as Partial<T>;
}

/**
 * True when PostgreSQL undid the transaction to break a deadlock (40P01) or a serialization failure
 * (40001): nothing of it was written, and running it again can succeed. Prisma words it P2034 for
 * an interactive transaction's own statements, and P2010 with the adapter's error in `meta` for a
 * raw one.
 */
export function isWriteConflict(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const candidate = e as { code?: unknown; kind?: unknown; originalCode?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
    if (candidate.code === 'P2034' || candidate.code === '40P01' || candidate.code === '40001') return true;
    if (candidate.kind === 'TransactionWriteConflict' || candidate.originalCode === '40P01' || candidate.originalCode === '40001') return true;
    e = candidate.cause ?? candidate.meta?.driverAdapterError;
  }
  return false;
}

/** How often an interactive transaction runs in all when PostgreSQL keeps undoing it (isWriteConflict). */
export const WRITE_CONFLICT_ATTEMPTS = 4;

interface TransactionRunner {
  $transaction(...args: never[]): Promise<unknown>;
}

/**
 * Makes `client.$transaction(fn)` run `fn` again, in a new transaction, when PostgreSQL undid it
 * to break a deadlock or a serialization failure, up to WRITE_CONFLICT_ATTEMPTS in all, after a
 * short random pause that lets the other side finish. Locks taken in different orders by
 * different paths (a scheduler tick holding pipeline rows while an API trigger's run insert waits
 * for one) then cost a retry instead of a 503. A callback only touches the database through its
 * transaction, so running it again is safe; the batch form (an array of queries) is left as is.
 */
export function retryWriteConflicts<C extends TransactionRunner>(client: C, attempts = WRITE_CONFLICT_ATTEMPTS): C {
  const run = client.$transaction.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const retrying = async (...args: unknown[]): Promise<unknown> => {
    if (typeof args[0] !== 'function') return run(...args);
    for (let attempt = 1; ; attempt++) {
      try {
        return await run(...args);
      } catch (err) {
        if (attempt >= attempts || !isWriteConflict(err)) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
  };
  Object.defineProperty(client, '$transaction', { value: retrying, writable: true, configurable: true });
  return client;
}
