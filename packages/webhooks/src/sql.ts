import type pg from 'pg';

/**
 * The raw-SQL surface this package needs. A service passes its PrismaClient (Prisma 7's
 * `$queryRawUnsafe` / `$executeRawUnsafe` / interactive `$transaction` fit it as they are);
 * `pgSql(pool)` adapts a node-postgres pool. Placeholders are `$1, $2, ...`; every parameter is
 * cast in the SQL (`$1::uuid`, `$2::text[]`), so both drivers send the same values.
 */
export interface SqlClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/** A SqlClient that can also run a callback in one transaction (Prisma's interactive transaction). */
export interface Sql extends SqlClient {
  $transaction<R>(fn: (tx: SqlClient) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

function clientOf(queryable: pg.Pool | pg.PoolClient): SqlClient {
  return {
    async $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T> {
      return (await queryable.query(query, values)).rows as T;
    },
    async $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> {
      return (await queryable.query(query, values)).rowCount ?? 0;
    },
  };
}

/** Sql over a node-postgres pool (tests, scripts); services pass their PrismaClient instead. */
export function pgSql(pool: pg.Pool): Sql {
  return {
    ...clientOf(pool),
    async $transaction<R>(fn: (tx: SqlClient) => Promise<R>): Promise<R> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(clientOf(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
  };
}
