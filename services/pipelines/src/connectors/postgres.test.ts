import { createAddressGuard, type Resolver } from '@platform/address-guard';
import type { WorkspaceId } from '@platform/core';
import type { ConnectorPolicy } from './connector';
import { ConnectorsConfig, DEFAULT_PLATFORM_DATABASES, platformDatabases } from './policy';
import { parseConnectionUrl, postgresDestination, PostgresConfig, workspaceSchema } from './postgres';

const resolve: Resolver = async (host) => {
  const table: Record<string, string[]> = { 'db.example.com': ['93.184.215.14'], 'internal.example': ['10.20.30.40'] };
  if (!table[host]) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return table[host];
};

function policy(allowPrivate: boolean): ConnectorPolicy {
  return {
    addressGuard: createAddressGuard({ allowPrivate, resolve }),
    platformDatabases: platformDatabases([...DEFAULT_PLATFORM_DATABASES], 'postgresql://postgres@127.0.0.1:5432/platform_pipelines_test'),
  };
}

describe('connection_url: what the schema refuses (400 invalid_format)', () => {
  test.each([
    ['postgresql://u:p@db.example.com/x?options=-c%20search_path%3Dws_other', 'may carry no parameter but sslmode'],
    ['postgresql://u:p@db.example.com/x?options=-csearch_path=ws_other', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?host=10.0.0.1', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?hostaddr=10.0.0.1', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?user=postgres', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?dbname=platform_gateway', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?application_name=x', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?sslrootcert=/etc/passwd', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?sslmode=require&sslmode=disable', 'may carry no parameter but sslmode'],
    ['postgresql://u@db.example.com/x?sslmode=no-verify', 'sslmode must be one of'],
    ['mysql://u@db.example.com/x', 'must be a postgres:// or postgresql:// URL'],
    ['not a url', 'must be a postgres:// or postgresql:// URL'],
    ['postgresql:///x', 'must name one host'],
    ['postgresql://u@%2Fvar%2Frun%2Fpostgresql/x', 'must name one host'], // a socket path
    ['postgresql://u@h1,h2/x', 'must name one host'],
    ['postgresql://db.example.com/x', 'must name a user'],
    ['postgresql://u@db.example.com/a/b', 'must be a URL of the form'],
    ['postgresql://u@db.example.com/x#frag', 'must not have a fragment'],
  ])('%s: %s', (url, message) => {
    const parsed = PostgresConfig.safeParse({ table: 't', connection_url: url });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues).toEqual([
      expect.objectContaining({ path: ['connection_url'], message: expect.stringContaining(message), params: { code: 'invalid_format' } }),
    ]);
  });

  test('the platform reads host, port, user, password, database and sslmode itself', () => {
    expect(parseConnectionUrl('postgresql://sync:s%40cret@db.example.com:6543/ware%5Fhouse?sslmode=verify-full')).toEqual({
      target: { host: 'db.example.com', port: 6543, user: 'sync', password: 's@cret', database: 'ware_house', sslmode: 'verify-full' },
    });
    // libpq: an empty path means the database named like the user.
    expect(parseConnectionUrl('postgres://platform_gateway@[2606:4700::1111]')).toEqual({
      target: { host: '2606:4700::1111', port: 5432, user: 'platform_gateway', password: '', database: 'platform_gateway', sslmode: undefined },
    });
  });
});

describe('verify (on create): addresses and the platform databases', () => {
  const verify = (url: string, allowPrivate = false) =>
    postgresDestination.verify!(PostgresConfig.parse({ table: 't', connection_url: url }), policy(allowPrivate));

  test('a public host passes; a name that does not resolve now passes (the run checks again)', async () => {
    await expect(verify('postgresql://u:p@db.example.com:5432/warehouse')).resolves.toEqual([]);
    await expect(verify('postgresql://u:p@nowhere.example/warehouse')).resolves.toEqual([]);
    await expect(verify('postgresql://u:p@93.184.215.14/warehouse?sslmode=require')).resolves.toEqual([]);
  });

  test.each([
    'postgresql://u@127.0.0.1/db',
    'postgresql://u@localhost/db',
    'postgresql://u@LOCALHOST./db',
    'postgresql://u@2130706433/db', // 127.0.0.1 as getaddrinfo reads it (a postgres:// host is not normalised by URL)
    'postgresql://u@0x7f.1/db',
    'postgresql://u@0/db',
    'postgresql://u@[::1]/db',
    'postgresql://u@[::ffff:10.0.0.1]/db',
    'postgresql://u@[64:ff9b::a9fe:a9fe]/db',
    'postgresql://u@169.254.169.254/db',
    'postgresql://u@internal.example/db', // resolves to 10.20.30.40
  ])('%s is refused: private_address, without saying what the name resolved to', async (url) => {
    expect(await verify(url)).toEqual([{ field: 'connection_url', code: 'private_address', message: 'must be a public address' }]);
    expect(await verify(url, true)).toEqual([]);
  });

  test.each([
    'postgresql://postgres@127.0.0.1:5432/platform_gateway',
    'postgresql://postgres@db.example.com/platform_gateway',
    'postgresql://postgres@127.0.0.1/platform_pipelines_test', // the pipelines database's own name, from its URL
    'postgresql://postgres@127.0.0.1/PLATFORM_EVENTS',
    'postgresql://postgres@127.0.0.1/platform%5Fwarehouse',
    'postgresql://platform_pipelines@127.0.0.1', // no path: the database is the user's name
  ])('%s names a platform database: refused even with private addresses allowed', async (url) => {
    for (const allowPrivate of [true, false]) {
      expect(await verify(url, allowPrivate)).toEqual([
        { field: 'connection_url', code: 'platform_database', message: 'must not name a database of the platform' },
      ]);
    }
  });
});

describe('settings', () => {
  test("the four deployables' default databases and the pipelines database are always refused; PIPELINES_PLATFORM_DATABASES adds the names a deployment uses", () => {
    const config = ConnectorsConfig.parse({});
    expect(config).toEqual({ CONNECTORS_ALLOW_PRIVATE: false, PIPELINES_PLATFORM_DATABASES: [] });
    expect([...platformDatabases(config.PIPELINES_PLATFORM_DATABASES, 'postgresql://h/platform_pipelines')]).toEqual([...DEFAULT_PLATFORM_DATABASES]);
    expect([
      ...platformDatabases(ConnectorsConfig.parse({ PIPELINES_PLATFORM_DATABASES: ' Gw_Db , ,other' }).PIPELINES_PLATFORM_DATABASES, 'postgresql://h/pl%5Fdb'),
    ]).toEqual([...DEFAULT_PLATFORM_DATABASES, 'gw_db', 'other', 'pl_db']);
  });

  test('a workspace schema is ws_ + the uuid without dashes; anything but a uuid is refused', () => {
    expect(workspaceSchema('0B3F5A1C-1111-4222-8333-944445555666' as WorkspaceId)).toBe('ws_0b3f5a1c111142228333944445555666');
    expect(() => workspaceSchema('x"; DROP SCHEMA public; --' as WorkspaceId)).toThrow();
  });
});
