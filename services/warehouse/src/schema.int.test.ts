import { schemaDifferences, testDatabaseUrl } from '@platform/testing';
import { createDatabase } from './database';

test('schema.prisma and the SQL migrations describe the same tables and columns', async () => {
  const db = createDatabase(testDatabaseUrl('warehouse'));
  try {
    expect(await schemaDifferences(db, testDatabaseUrl('warehouse'))).toEqual([]);
  } finally {
    await db.$disconnect();
  }
});
