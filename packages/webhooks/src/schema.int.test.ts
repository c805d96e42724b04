import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testSql } from './test/app';

const root = join(__dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Column {
  table: string;
  column: string;
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

/** The columns prisma/webhooks.prisma.txt declares, in information_schema terms. */
function prismaColumns(text: string): Column[] {
  const columns: Column[] = [];
  for (const [, body] of text.matchAll(/^model \w+ \{\n([\s\S]*?)^\}/gm)) {
    const table = /@@map\("(\w+)"\)/.exec(body!)![1]!;
    for (const line of body!.split('\n')) {
      const field = /^\s+(\w+)\s+(String|Int|Boolean|DateTime)(\[\]|\?)?(.*)$/.exec(line);
      if (!field) continue;
      const [, name, scalar, modifier, attributes] = field as unknown as [string, string, string, string | undefined, string];
      const type = modifier === '[]' ? 'ARRAY' : scalar === 'String' ? (attributes.includes('@db.Uuid') ? 'uuid' : 'text') : scalar === 'Int' ? 'integer' : scalar === 'Boolean' ? 'boolean' : 'timestamp with time zone';
      columns.push({ table, column: /@map\("(\w+)"\)/.exec(attributes)?.[1] ?? name, type, nullable: modifier === '?', hasDefault: attributes.includes('@default(') });
    }
  }
  return columns.sort((a, b) => `${a.table}.${a.column}`.localeCompare(`${b.table}.${b.column}`));
}

describe('schema files', () => {
  test('the Prisma models and sql/webhooks.sql declare the same columns, types, nullability and defaults', async () => {
    const { pool } = testSql();
    try {
      const { rows } = await pool.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null }>(
        `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name IN ('webhook_endpoints', 'webhook_deliveries')`,
      );
      const actual = rows
        .map((r) => ({ table: r.table_name, column: r.column_name, type: r.data_type, nullable: r.is_nullable === 'YES', hasDefault: r.column_default !== null }))
        .sort((a, b) => `${a.table}.${a.column}`.localeCompare(`${b.table}.${b.column}`));
      expect(prismaColumns(read('prisma/webhooks.prisma.txt'))).toEqual(actual);
      expect(actual).toHaveLength(22);
    } finally {
      await pool.end();
    }
  });

  test('the test database is migrated with sql/webhooks.sql as shipped', () => {
    expect(read('test/migrations/20240101000000_init/migration.sql')).toContain(read('sql/webhooks.sql'));
  });
});
