// Integration tests run on a real PostgreSQL database of their own: the outbox table every
// service has, plus sql/webhooks.sql (test/migrations/*_init is exactly that pair). The database
// is created afresh on every run, so editing the SQL never trips the migration checksum.
const { join } = require('node:path');
const pg = require('pg');
const { prepareTestDatabase, testDatabaseUrl } = require('@platform/testing');

module.exports = async () => {
  const url = testDatabaseUrl('webhooks');
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  await prepareTestDatabase(url, join(__dirname, 'test', 'migrations'));
};
