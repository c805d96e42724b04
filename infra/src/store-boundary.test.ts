import { join } from 'node:path';
import { DEPLOYABLES, ROOT } from './deployables';
import { prismaClientImports, sourceFiles } from './store-boundary';

describe('only stores hold the Prisma client', () => {
  test('no file of a deployable but its stores and database.ts imports the generated client (type imports aside)', () => {
    const dirs = [...new Set(DEPLOYABLES.map((d) => d.dir))];
    const files = dirs.flatMap((dir) => sourceFiles(ROOT, join(ROOT, dir, 'src')));
    expect(files.filter((f) => f.path.endsWith('.store.ts')).length).toBeGreaterThanOrEqual(dirs.length);
    expect(files.flatMap(prismaClientImports)).toEqual([]);
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
    expect(prismaClientImports({ path: 'services/x/src/items.int.test.ts', text: "import { PrismaClient } from './generated/prisma/client';" })).toHaveLength(1);
  });

  test('stores, database.ts and type-only imports pass', () => {
    const text = "import { Prisma } from './generated/prisma/client';";
    expect(prismaClientImports({ path: 'services/x/src/items.store.ts', text })).toEqual([]);
    expect(prismaClientImports({ path: 'services/x/src/database.ts', text })).toEqual([]);
    expect(prismaClientImports({ path: 'services/x/src/items.render.ts', text: "import type { Item } from './generated/prisma/client';" })).toEqual([]);
    expect(prismaClientImports({ path: 'services/x/src/items.service.ts', text: "import { Item } from './items.store';" })).toEqual([]);
  });
});
