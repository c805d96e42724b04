import type { Server } from 'node:http';
import { createLogger } from '@platform/core';
import { TEST_INTERNAL_SECRET, testDatabaseUrl } from '@platform/testing';
import { createApp } from '../app';
import { createDatabase, type Database } from '../database';

/** The warehouse app on a real database and a real port, for integration tests. */
export async function startTestApp(): Promise<{ server: Server; db: Database; close: () => Promise<void> }> {
  const db = createDatabase(testDatabaseUrl('warehouse'));
  const app = createApp({ db, logger: createLogger('warehouse-test', 'silent'), internalSecret: TEST_INTERNAL_SECRET });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    server,
    db,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.$disconnect();
    },
  };
}
