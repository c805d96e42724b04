import type { Database } from './database';
import { runsRequeueStore, runsRetentionStore, runsStore } from './runs.store';
import { schedulerStore } from './scheduler.store';

/** The run worker's stores over one client: what createRunWorker is given instead of the client. */
export function runWorkerStores(db: Database) {
  return {
    runs: runsStore(db),
    requeue: runsRequeueStore(db),
    retention: runsRetentionStore(db),
    scheduler: schedulerStore(db),
    ping: () => db.$queryRaw`SELECT 1`,
  };
}
export type RunWorkerStores = ReturnType<typeof runWorkerStores>;
