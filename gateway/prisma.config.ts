import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (generate, migrate deploy). The gateway itself reads GATEWAY_DATABASE_URL via src/config.ts.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.GATEWAY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/platform_gateway' },
});
