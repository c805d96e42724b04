// The integration tests run the commands against a gateway on its real, migrated test database.
const { prepareTestDatabase, testDatabaseUrl } = require('@platform/testing');
const { MIGRATIONS_DIR } = require('@platform/gateway/migrate');

module.exports = async () => {
  await prepareTestDatabase(testDatabaseUrl('gateway'), MIGRATIONS_DIR);
};
