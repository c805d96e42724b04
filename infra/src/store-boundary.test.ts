import { join } from 'node:path';
import { DEPLOYABLES, ROOT } from './deployables';
import {
  clientModuleImports,
  DATABASE_MODULE,
  DRIVER_MODULE,
  entryPoints,
  mayHoldDatabase,
  mayHoldPool,
  prismaClientImports,
  sourceFiles,
  SQL_MODULE,
} from './store-boundary';

const dirs = [...new Set(DEPLOYABLES.map((d) => d.dir))];
const files = dirs.flatMap((dir) => sourceFiles(ROOT, join(ROOT, dir, 'src')));
const entries = entryPoints(ROOT, DEPLOYABLES);

describe('only stores hold the Prisma client', () => {
  test('no file of a deployable but its stores and database.ts imports the generated client (type imports aside)', () => {
    expect(files.filter((f) => f.path.endsWith('.store.ts')).length).toBeGreaterThanOrEqual(dirs.length);
    expect(files.flatMap(prismaClientImports)).toEqual([]);
  });

  test('no app factory, route, handler or service of a deployable is handed the client: only stores, entry points and tests import database.ts', () => {
    expect([...entries].sort()).toEqual([
      'gateway/src/main.ts',
      'services/events/src/main.ts',
      'services/pipelines/src/main.ts',
      'services/pipelines/src/worker.ts',
      'services/warehouse/src/main.ts',
    ]);
    const handedTheClient = files.filter((f) => !mayHoldDatabase(f.path, entries));
    expect(handedTheClient.map((f) => f.path)).toEqual(
      expect.arrayContaining(['services/events/src/app.ts', 'services/pipelines/src/worker.app.ts', 'gateway/src/app.ts']),
    );
    expect(handedTheClient.flatMap((f) => clientModuleImports(f, DATABASE_MODULE))).toEqual([]);
  });

  test('no app factory, route, handler or service of a deployable is handed a pg pool: only stores, connectors, entry points and tests import pg', () => {
    const handedAPool = files.filter((f) => !mayHoldPool(f.path, entries));
    expect(handedAPool.map((f) => f.path)).toEqual(
      expect.arrayContaining(['services/pipelines/src/app.ts', 'services/pipelines/src/worker.app.ts', 'services/pipelines/src/connectors.service.ts']),
    );
    expect(handedAPool.flatMap((f) => clientModuleImports(f, DRIVER_MODULE))).toEqual([]);
    expect(clientModuleImports({ path: 'services/x/src/x.routes.ts', text: "import type pg from 'pg';" }, DRIVER_MODULE)).toHaveLength(1);
    expect(clientModuleImports({ path: 'services/x/src/x.routes.ts', text: "import { pgIdentifier } from './pg-names';" }, DRIVER_MODULE)).toEqual([]);
    for (const path of ['services/x/src/connectors/postgres.ts', 'services/x/src/connectors.store.ts'])
      expect([path, mayHoldPool(path, entries)]).toEqual([path, true]);
    for (const path of ['services/x/src/connectors.routes.ts', 'services/x/src/connectors.service.ts'])
      expect([path, mayHoldPool(path, entries)]).toEqual([path, false]);
  });

  test("the webhook endpoints' routes and service get the webhooks store, not the client a service hands the webhooks runtime", () => {
    const endpointsApi = sourceFiles(ROOT, join(ROOT, 'packages/webhooks/src')).filter((f) => /\.(routes|service)\.ts$/.test(f.path));
    expect(endpointsApi.map((f) => f.path).sort()).toEqual(['packages/webhooks/src/endpoints.routes.ts', 'packages/webhooks/src/endpoints.service.ts']);
    expect(endpointsApi.flatMap((f) => clientModuleImports(f, SQL_MODULE))).toEqual([]);
  });

  test('the check finds a client imported by a handler, a service or a test, by any spelling', () => {
    const outside = (text: string) => prismaClientImports({ path: 'services/x/src/items.service.ts', text });
    expect(outside("import { PrismaClient } from './generated/prisma/client';")).toHaveLength(1);
    expect(outside("import { Prisma, type Item } from '../generated/prisma/client';")).toHaveLength(1);
    expect(outside("import {\n  Prisma,\n  type Item,\n} from './generated/prisma/client';")).toHaveLength(1);
    expect(outside("export { Prisma } from './generated/prisma/client';")).toHaveLength(1);
    expect(outside("import * as db from './generated/prisma';")).toHaveLength(1);
    expect(outside("const { PrismaClient } = require('./generated/prisma/client');")).toHaveLength(1);
    expect(outside("const client = await import('./generated/prisma/client');")).toHaveLength(1);
    expect(prismaClientImports({ path: 'services/x/src/items.int.test.ts', text: "import { PrismaClient } from './generated/prisma/client';" })).toHaveLength(
      1,
    );
  });

  test("the check finds the client's own types imported outside a store: a file typed with them is handed the client", () => {
    const outside = (text: string) => prismaClientImports({ path: 'services/x/src/items.service.ts', text });
    expect(outside("import type { PrismaClient } from './generated/prisma/client';")).toHaveLength(1);
    expect(outside("import type { Item, Prisma } from './generated/prisma/client';")).toHaveLength(1);
    expect(outside("import type * as rows from './generated/prisma/client';")).toHaveLength(1);
  });

  test('stores, database.ts and type-only imports of rows pass', () => {
    const text = "import { Prisma } from './generated/prisma/client';";
    expect(prismaClientImports({ path: 'services/x/src/items.store.ts', text })).toEqual([]);
    expect(prismaClientImports({ path: 'services/x/src/database.ts', text })).toEqual([]);
    expect(prismaClientImports({ path: 'services/x/src/items.render.ts', text: "import type { Item } from './generated/prisma/client';" })).toEqual([]);
    expect(prismaClientImports({ path: 'services/x/src/items.service.ts', text: "import { Item } from './items.store';" })).toEqual([]);
  });

  test('the check finds database.ts imported, for its type too, by any path and spelling', () => {
    const found = (text: string) => clientModuleImports({ path: 'services/x/src/app.ts', text }, DATABASE_MODULE);
    expect(found("import type { Database } from './database';")).toHaveLength(1);
    expect(found("import { createDatabase, type Database } from '../database';")).toHaveLength(1);
    expect(found("import type { Database } from './database.js';")).toHaveLength(1);
    expect(found("export type { Database } from './database';")).toHaveLength(1);
    expect(found("type Db = import('./database').Database;")).toHaveLength(1);
    expect(found("import { databasePoolSettings } from '@platform/core';")).toEqual([]);
    expect(found("import { fromDatabase } from './database-rows';")).toEqual([]);
    expect(clientModuleImports({ path: 'packages/webhooks/src/x.routes.ts', text: "import type { Sql } from './sql';" }, SQL_MODULE)).toHaveLength(1);
  });

  test('stores, database.ts, entry points and test code may hold the client; app factories, routes, services and other modules may not', () => {
    const entry = new Set(['services/x/src/main.ts']);
    for (const path of [
      'services/x/src/items.store.ts',
      'services/x/src/database.ts',
      'services/x/src/main.ts',
      'services/x/src/items.int.test.ts',
      'services/x/src/test/app.ts',
    ]) {
      expect([path, mayHoldDatabase(path, entry)]).toEqual([path, true]);
    }
    for (const path of [
      'services/x/src/app.ts',
      'services/x/src/worker.app.ts',
      'services/x/src/items.routes.ts',
      'services/x/src/items.service.ts',
      'services/x/src/runs.requeue.ts',
      'services/y/src/main.ts',
    ]) {
      expect([path, mayHoldDatabase(path, entry)]).toEqual([path, false]);
    }
  });
});
