// Integration tests run on a real, migrated PostgreSQL database of their own, and spawn the
// real worker from dist/ (turbo builds the package before its tests).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { prepareTestDatabase, testDatabaseUrl } = require('@platform/testing');

module.exports = async () => {
  const worker = join(__dirname, 'dist', 'worker.js');
  if (!existsSync(worker)) throw new Error(`${worker} is missing: build first (npx tsc -p tsconfig.build.json)`);
  await prepareTestDatabase(testDatabaseUrl('pipelines'), join(__dirname, 'prisma', 'migrations'));
};
