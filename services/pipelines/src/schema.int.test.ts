import { schemaDifferences, testDatabaseUrl } from '@platform/testing';
import { createDatabase } from './database';

test('schema.prisma and the SQL migrations describe the same tables and columns', async () => {
  const db = createDatabase(testDatabaseUrl('pipelines'));
  try {
    expect(await schemaDifferences(db, testDatabaseUrl('pipelines'))).toEqual([]);
  } finally {
    await db.$disconnect();
  }
});
