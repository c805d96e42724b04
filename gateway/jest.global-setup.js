// Integration tests run on a real, migrated PostgreSQL database of their own.
const { join } = require('node:path');
const { prepareTestDatabase, testDatabaseUrl } = require('@platform/testing');

module.exports = async () => {
  await prepareTestDatabase(testDatabaseUrl('gateway'), join(__dirname, 'prisma', 'migrations'));
};
