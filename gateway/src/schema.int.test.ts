import pg from 'pg';
import { schemaDifferences, testDatabaseUrl } from '@platform/testing';
import { createDatabase } from './database';

test('schema.prisma and the SQL migrations describe the same tables and columns', async () => {
  const db = createDatabase(testDatabaseUrl('gateway'));
  try {
    expect(await schemaDifferences(db, testDatabaseUrl('gateway'))).toEqual([]);
  } finally {
    await db.$disconnect();
  }
});

test('api_keys.scopes is a nullable text[] (NULL = unrestricted) and token_hash is unique', async () => {
  const client = new pg.Client({ connectionString: testDatabaseUrl('gateway') });
  await client.connect();
  try {
    const column = await client.query(`SELECT udt_name, is_nullable FROM information_schema.columns WHERE table_name = 'api_keys' AND column_name = 'scopes'`);
    expect(column.rows).toEqual([{ udt_name: '_text', is_nullable: 'YES' }]);
    const index = await client.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'api_keys' AND indexdef LIKE 'CREATE UNIQUE INDEX%token_hash%'`);
    expect(index.rowCount).toBe(1);
  } finally {
    await client.end();
  }
});
