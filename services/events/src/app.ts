import { createServiceApp, type Logger } from '@platform/core';
import type { Express } from 'express';
import type { Database } from './database';
import { eventsRoutes } from './events.routes';
import { eventsStore } from './events.store';

export interface EventsDeps {
  db: Database;
  logger: Logger;
  internalSecret: string;
}

export function createApp(deps: EventsDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    routes: eventsRoutes(eventsStore(deps.db)),
    ready: async () => {
      await deps.db.$queryRaw`SELECT 1`;
    },
  });
}
