import type pg from 'pg';
import type { ConnectorRuntime } from './connectors';

/**
 * The pipelines database as connectors reach it when a config names no other: a postgres
 * destination without `connection_url` writes (or is checked) in the workspace's own schema
 * there. Only this store holds the pool; services and the worker's app get the store.
 */
export function connectorsStore(pool: pg.Pool) {
  return {
    /** What a connector is lent: `settings`, and this store's pool as the postgres destination's default database. */
    runtime(settings: Omit<ConnectorRuntime, 'defaultPool'>): ConnectorRuntime {
      return { ...settings, defaultPool: pool };
    },
  };
}
export type ConnectorsStore = ReturnType<typeof connectorsStore>;
