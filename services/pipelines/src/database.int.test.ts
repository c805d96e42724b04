import { randomUUID } from 'node:crypto';
import { testDatabaseUrl } from '@platform/testing';
import { createDatabase, type Database } from './database';

let db: Database;
const workspaceId = randomUUID();

beforeAll(() => {
  db = createDatabase(testDatabaseUrl('pipelines'));
});

afterAll(async () => {
  await db.pipeline.deleteMany({ where: { workspaceId } });
  await db.$disconnect();
});

test('two transactions that lock two pipelines in opposite orders both commit: the one PostgreSQL undoes runs again', async () => {
  const [a, b] = await Promise.all(
    ['a', 'b'].map((name) =>
      db.pipeline.create({
        data: { workspaceId, name, sourceConnector: 'sample', sourceConfig: {}, destinationConnector: 'postgres', destinationConfig: {} },
      }),
    ),
  );
  let firstLocks = 0;
  let attempts = 0;
  // Each holds its first row until both hold one, then asks for the other's: a deadlock, which
  // PostgreSQL breaks by undoing one of them.
  const crossing = (first: string, second: string, name: string) =>
    db.$transaction(async (tx) => {
      attempts++;
      const lockRow = (id: string) => tx.$queryRaw`SELECT "id" FROM "pipelines" WHERE "id" = ${id}::uuid FOR UPDATE`;
      await lockRow(first);
      if (++firstLocks <= 2) while (firstLocks < 2) await new Promise((resolve) => setImmediate(resolve));
      await lockRow(second);
      await tx.pipeline.update({ where: { id: first }, data: { name: `${name} done` } });
      return name;
    });
  await expect(Promise.all([crossing(a!.id, b!.id, 'a'), crossing(b!.id, a!.id, 'b')])).resolves.toEqual(['a', 'b']);
  expect(attempts).toBe(3);
  const names = (await db.pipeline.findMany({ where: { workspaceId }, orderBy: { name: 'asc' } })).map((p) => p.name);
  expect(names).toEqual(['a done', 'b done']);
});
