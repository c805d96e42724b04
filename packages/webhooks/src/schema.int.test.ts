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

/** Each model of a Prisma schema: its table (`@@map`) and its body. */
function prismaModels(text: string): { table: string; body: string }[] {
  return [...text.matchAll(/^model \w+ \{\n([\s\S]*?)^\}/gm)].map(([, body]) => ({ table: /@@map\("(\w+)"\)/.exec(body!)![1]!, body: body! }));
}

/** The columns prisma/webhooks.prisma.txt declares, in information_schema terms. */
function prismaColumns(text: string): Column[] {
  const columns: Column[] = [];
  for (const { table, body } of prismaModels(text)) {
    for (const line of body.split('\n')) {
      const field = /^\s+(\w+)\s+(String|Int|Boolean|DateTime)(\[\]|\?)?(.*)$/.exec(line);
      if (!field) continue;
      const [, name, scalar, modifier, attributes] = field as unknown as [string, string, string, string | undefined, string];
      const type =
        modifier === '[]'
          ? 'ARRAY'
          : scalar === 'String'
            ? attributes.includes('@db.Uuid')
              ? 'uuid'
              : 'text'
            : scalar === 'Int'
              ? 'integer'
              : scalar === 'Boolean'
                ? 'boolean'
                : 'timestamp with time zone';
      columns.push({
        table,
        column: /@map\("(\w+)"\)/.exec(attributes)?.[1] ?? name,
        type,
        nullable: modifier === '?',
        hasDefault: attributes.includes('@default('),
      });
    }
  }
  return columns.sort((a, b) => `${a.table}.${a.column}`.localeCompare(`${b.table}.${b.column}`));
}

/** The indexes prisma/webhooks.prisma.txt declares (`@@index`), as `table(column, ...)`. */
function prismaIndexes(text: string): string[] {
  const indexes: string[] = [];
  for (const { table, body } of prismaModels(text)) {
    const columnOf = new Map<string, string>();
    for (const [, name, attributes] of body.matchAll(/^\s+(\w+)\s+\S+(.*)$/gm)) columnOf.set(name!, /@map\("(\w+)"\)/.exec(attributes!)?.[1] ?? name!);
    for (const [, fields] of body.matchAll(/@@index\(\[([^\]]*)\]\)/g)) {
      const columns = fields!.split(',').map((f) => columnOf.get(f.trim()) ?? `unknown field ${f.trim()}`);
      indexes.push(`${table}(${columns.join(', ')})`);
    }
  }
  return indexes.sort();
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
        .map((r) => ({
          table: r.table_name,
          column: r.column_name,
          type: r.data_type,
          nullable: r.is_nullable === 'YES',
          hasDefault: r.column_default !== null,
        }))
        .sort((a, b) => `${a.table}.${a.column}`.localeCompare(`${b.table}.${b.column}`));
      expect(prismaColumns(read('prisma/webhooks.prisma.txt'))).toEqual(actual);
      expect(actual).toHaveLength(22);
    } finally {
      await pool.end();
    }
  });

  test('the Prisma models and sql/webhooks.sql declare the same indexes (the primary keys aside)', async () => {
    const { pool } = testSql();
    try {
      const { rows } = await pool.query<{ index: string }>(
        `SELECT t.relname || '(' || string_agg(a.attname, ', ' ORDER BY k.n) || ')' AS "index"
           FROM pg_index i
           JOIN pg_class t ON t.oid = i.indrelid
           CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
          WHERE t.relname IN ('webhook_endpoints', 'webhook_deliveries') AND NOT i.indisprimary
          GROUP BY t.relname, i.indexrelid`,
      );
      expect(prismaIndexes(read('prisma/webhooks.prisma.txt'))).toEqual(rows.map((r) => r.index).sort());
      // Retention deletes delivery records by "created_at" alone.
      expect(rows.map((r) => r.index)).toContain('webhook_deliveries(created_at)');
    } finally {
      await pool.end();
    }
  });

  test('the test database is migrated with sql/webhooks.sql as shipped', () => {
    expect(read('test/migrations/20240101000000_init/migration.sql')).toContain(read('sql/webhooks.sql'));
  });
});
