import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from './processes';
import { findRedisBinaries, redisProcessGroup, redisCommand, redisInfo, spawnRedisProcess, type RedisNode } from './redis-processes';
import { waitFor } from './wait';

/**
 * A throwaway Redis under Sentinel on free loopback ports: one master, one replica and three
 * sentinels (quorum 2) that promote the replica when the master dies, as production's do.
 */

export interface RedisSentinelOptions {
  /** The name the sentinels monitor the master under (REDIS_SENTINEL_MASTER); default `platform`. */
  masterName?: string;
  /** down-after-milliseconds: how long the master may not answer before it counts as down (default 1,000; production often 30,000). */
  downAfterMs?: number;
  /** Bound of start, failover and restart waits (default 60 s). */
  timeoutMs?: number;
}

export interface RedisSentinel {
  /** `host:port,...` of the three sentinels: what REDIS_SENTINELS takes. */
  sentinels: string;
  masterName: string;
  /** The variables that put a process on this Redis: REDIS_SENTINELS and REDIS_SENTINEL_MASTER. */
  env: Record<string, string>;
  /** The two data nodes, the first master at the start. */
  nodes: RedisNode[];
  /** The master the sentinels name now. */
  master(): Promise<RedisNode>;
  /** SIGKILLs the master and resolves once every sentinel names the replica as master and it says `role:master`. */
  killMaster(): Promise<{ killed: RedisNode; promoted: RedisNode }>;
  /** Starts a dead data node again (empty: no persistence); resolves once it replicates the master in sync. */
  restart(node: RedisNode): Promise<void>;
  /** A node's or a sentinel's log. */
  log(node: RedisNode): string;
  /** Kills every process and deletes their directories; idempotent. */
  stop(): Promise<void>;
}

const addressOf = (node: RedisNode) => `${node.host}:${node.port}`;

/** A sentinel's reply of field, value, field, value... as an object. */
function fieldsOf(reply: unknown): Record<string, string> {
  const list = reply as string[];
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]!] = list[i + 1]!;
  return fields;
}

/**
 * Starts a master, its replica and three sentinels (`redis-server <conf> --sentinel`, quorum 2,
 * short down-after and failover timeouts), and resolves once every sentinel names the master,
 * sees the replica up and knows the two other sentinels. The processes die with this process;
 * on any failure every one is killed first.
 */
export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<RedisSentinel> {
  const { masterName = 'platform', downAfterMs = 1_000, timeoutMs = 60_000 } = options;
  if (!/^[A-Za-z0-9_.-]+$/.test(masterName)) throw new Error(`sentinel master name must be [A-Za-z0-9_.-]: ${masterName}`);
  findRedisBinaries();
  const [masterPort, replicaPort, ...sentinelPorts] = (await freePorts(5)) as [number, number, number, number, number];
  const { root, processes, stop, processOf } = redisProcessGroup('redis-sentinel', 'a process of this Sentinel group');
  const start = async (port: number, args: (dir: string) => string[]) => {
    const dir = join(root, `redis-${port}`);
    mkdirSync(dir);
    processes.set(`127.0.0.1:${port}`, await spawnRedisProcess({ port, dir, args: args(dir) }));
  };
  // prettier-ignore
  const dataNode = (port: number, replicaOf?: number) => (dir: string) => [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--logfile', join(dir, 'redis.log'),
    '--save', '', '--appendonly', 'no',
    // A replica syncs at once instead of after the 5 s default delay.
    '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0',
    ...(replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(replicaOf)]),
  ];
  const sentinels: RedisNode[] = sentinelPorts.map((port) => ({ host: '127.0.0.1', port }));
  const nodes: RedisNode[] = [masterPort, replicaPort].map((port) => ({ host: '127.0.0.1', port }));
  const sentinelSays = (sentinel: RedisNode, ...args: string[]) => redisCommand(sentinel, ['SENTINEL', ...args]);
  const namedMaster = async (sentinel: RedisNode): Promise<string> =>
    ((await sentinelSays(sentinel, 'get-master-addr-by-name', masterName)) as string[]).join(':');

  /** Throws the first reason the group is not settled on `expected` as master yet. */
  const checkSettled = async (expected: RedisNode, replica?: RedisNode): Promise<true> => {
    for (const sentinel of sentinels) {
      const named = await namedMaster(sentinel);
      if (named !== addressOf(expected)) throw new Error(`sentinel ${sentinel.port} names ${named} as master, not ${addressOf(expected)}`);
      const master = fieldsOf(await sentinelSays(sentinel, 'master', masterName));
      if (master['num-other-sentinels'] !== String(sentinels.length - 1)) {
        throw new Error(`sentinel ${sentinel.port} knows ${master['num-other-sentinels']} other sentinels`);
      }
      if (replica) {
        const replicas = ((await sentinelSays(sentinel, 'replicas', masterName)) as unknown[]).map(fieldsOf);
        const seen = replicas.find((r) => `${r.ip}:${r.port}` === addressOf(replica));
        if (!seen || seen.flags !== 'slave' || seen['master-link-status'] !== 'ok') {
          throw new Error(`sentinel ${sentinel.port} does not see ${addressOf(replica)} as a replica in sync (${seen?.flags ?? 'unknown'})`);
        }
      }
    }
    if ((await redisInfo(expected, 'replication')).role !== 'master') throw new Error(`${addressOf(expected)} does not say role:master`);
    if (replica) {
      const replication = await redisInfo(replica, 'replication');
      if (replication.master_port !== String(expected.port) || replication.master_link_status !== 'up') {
        throw new Error(`${addressOf(replica)} does not replicate ${addressOf(expected)} in sync`);
      }
    }
    return true;
  };
  const settled = (expected: RedisNode, replica?: RedisNode) =>
    waitFor(`the sentinels to name ${addressOf(expected)} as master`, () => checkSettled(expected, replica), timeoutMs, 100);
  const master = async (): Promise<RedisNode> => {
    let lastError: unknown = new Error('no sentinel runs');
    for (const sentinel of sentinels) {
      try {
        const [host, port] = (await sentinelSays(sentinel, 'get-master-addr-by-name', masterName)) as [string, string];
        return { host, port: Number(port) };
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  };

  try {
    await start(masterPort, dataNode(masterPort));
    await start(replicaPort, dataNode(replicaPort, masterPort));
    await Promise.all(
      sentinels.map(({ port }) =>
        start(port, (dir) => {
          // A sentinel rewrites its configuration file: one of its own, written here.
          const conf = join(dir, 'sentinel.conf');
          writeFileSync(
            conf,
            [
              `port ${port}`,
              'bind 127.0.0.1',
              `dir ${dir}`,
              `logfile ${join(dir, 'redis.log')}`,
              `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
              `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
              `sentinel failover-timeout ${masterName} ${Math.max(downAfterMs * 5, 5_000)}`,
              `sentinel parallel-syncs ${masterName} 1`,
              '',
            ].join('\n'),
          );
          return [conf, '--sentinel'];
        }),
      ),
    );
    await settled(nodes[0]!, nodes[1]);

    const sentinelList = sentinels.map(addressOf).join(',');
    return {
      sentinels: sentinelList,
      masterName,
      env: { REDIS_SENTINELS: sentinelList, REDIS_SENTINEL_MASTER: masterName },
      nodes,
      master,
      killMaster: async () => {
        const killed = await master();
        const promoted = nodes.find((node) => addressOf(node) !== addressOf(killed) && processOf(node).running());
        if (!promoted) throw new Error('no running replica to promote');
        await processOf(killed).kill('SIGKILL');
        await settled(promoted);
        return { killed, promoted };
      },
      restart: async (node) => {
        await processOf(node).start();
        // What the sentinels do to a returning old master, only at once instead of after ~20 s.
        const current = await master();
        if (addressOf(current) !== addressOf(node)) await redisCommand(node, ['REPLICAOF', current.host, String(current.port)]);
        await settled(current, node);
      },
      log: (node) => processOf(node).log(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
