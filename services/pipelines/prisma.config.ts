import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (generate, migrate deploy). The service itself reads PIPELINES_DATABASE_URL via src/config.ts.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.PIPELINES_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/platform_pipelines' },
});
