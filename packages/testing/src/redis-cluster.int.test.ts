import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from './redis-cluster';
import { redisCommand, redisInfo } from './redis-processes';
import { waitFor } from './wait';

let cluster: RedisCluster;
let client: Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
  client = new Cluster(
    cluster.seeds.split(',').map((seed) => ({ host: seed.split(':')[0], port: Number(seed.split(':')[1]) })),
    { clusterRetryStrategy: () => 200, redisOptions: { maxRetriesPerRequest: 1 } },
  );
  client.on('error', () => undefined);
}, 120_000);

afterAll(async () => {
  await client?.quit().catch(() => client.disconnect());
  await cluster?.stop();
});

const address = (node: { host: string; port: number }) => `${node.host}:${node.port}`;

test('6 nodes: 3 masters serving all 16384 slots, each with one replica in sync, and REDIS_CLUSTER_NODES names every node', async () => {
  expect(cluster.nodes).toHaveLength(6);
  expect(cluster.env).toEqual({ REDIS_CLUSTER_NODES: cluster.nodes.map(address).join(',') });
  const masters = await cluster.masters();
  expect(masters).toHaveLength(3);
  for (const master of masters) {
    const replicas = await cluster.replicasOf(master);
    expect(replicas).toHaveLength(1);
    const replication = await redisInfo(replicas[0]!, 'replication');
    expect(replication.master_link_status).toBe('up');
  }
  for (const node of cluster.nodes) expect(String(await redisCommand(node, ['CLUSTER', 'INFO']))).toContain('cluster_state:ok');
});

test('an ioredis Cluster client writes and reads keys on every master, each key on the master masterOfKey names', async () => {
  const keys = Array.from({ length: 60 }, (_, i) => `fleet-test:key-${i}`);
  for (const key of keys) await client.set(key, key);
  for (const key of keys) expect(await client.get(key)).toBe(key);
  const owners = new Set<string>();
  for (const key of keys) {
    const owner = await cluster.masterOfKey(key);
    owners.add(address(owner));
    // The key is on that master itself: a plain connection there reads it without a redirection.
    expect(await redisCommand(owner, ['GET', key])).toBe(key);
  }
  expect([...owners].sort()).toEqual((await cluster.masters()).map(address).sort());
});

test('killMaster: the replica of the killed master serves its slots, the client follows it, and the killed node rejoins as a replica', async () => {
  const before = await cluster.masters();
  const replicaOfFirst = await cluster.replicasOf(before[0]!);
  const key = await waitFor('a key on master 0', async () => {
    for (let i = 0; ; i++) if (address(await cluster.masterOfKey(`fleet-test:failover-${i}`)) === address(before[0]!)) return `fleet-test:failover-${i}`;
  });
  await client.set(key, 'before');
  // Replication is asynchronous: the test waits until the replica has all the master wrote, so the key survives.
  const written = Number((await redisInfo(before[0]!, 'replication')).master_repl_offset);
  await waitFor('the replica to catch up', async () => Number((await redisInfo(replicaOfFirst[0]!, 'replication')).slave_repl_offset) >= written);

  const { killed, promoted } = await cluster.killMaster(0);
  expect(killed).toEqual(before[0]);
  expect(promoted).toEqual(replicaOfFirst[0]);
  const after = await cluster.masters();
  expect(after.map(address)).toContain(address(promoted));
  expect(after.map(address)).not.toContain(address(killed));
  expect(address(await cluster.masterOfKey(key))).toBe(address(promoted));

  await waitFor('the client to read the key from the promoted replica', async () => (await client.get(key).catch(() => undefined)) === 'before', 60_000, 200);
  await client.set(key, 'after');
  expect(await redisCommand(promoted, ['GET', key])).toBe('after');

  await cluster.restart(killed);
  expect((await redisInfo(killed, 'replication')).role).toBe('slave');
  expect((await cluster.replicasOf(promoted)).map(address)).toEqual([address(killed)]);
}, 120_000);
