import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from './processes';
import { findRedisBinaries, redisProcessGroup, parseInfo, redisCommand, redisInfo, spawnRedisProcess, type RedisNode } from './redis-processes';
import { waitFor } from './wait';

/**
 * A throwaway Redis Cluster of real `redis-server` processes on free loopback ports, for the
 * fleet and its drills: masters and replicas that fail over as production's do (the machine's
 * shared Redis is never touched).
 */

export interface RedisClusterOptions {
  /** Default 3 (the fewest a cluster elects with). */
  masters?: number;
  /** Default 1. */
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a node may be unreachable before it counts as failing (default 2,000; production often 15,000). */
  nodeTimeoutMs?: number;
  /** Bound of start, failover and restart waits (default 60 s). */
  timeoutMs?: number;
}

export interface RedisCluster {
  /** Every node, masters and replicas, in start order (a dead one included). */
  nodes: RedisNode[];
  /** `host:port,host:port,...` of every node: what REDIS_CLUSTER_NODES takes. */
  seeds: string;
  /** The variables that put a process on this cluster: `{ REDIS_CLUSTER_NODES: seeds }`. */
  env: Record<string, string>;
  /** The masters that serve slots now, by their first slot (index 0 serves slot 0). */
  masters(): Promise<RedisNode[]>;
  /** The nodes that replicate `master` now. */
  replicasOf(master: RedisNode): Promise<RedisNode[]>;
  /** The master that serves `key`'s hash slot now. */
  masterOfKey(key: string): Promise<RedisNode>;
  /**
   * SIGKILLs the `index`-th master of masters() (default 0) and resolves once one of its
   * replicas serves its slots, every live node says `cluster_state:ok` and agrees.
   */
  killMaster(index?: number): Promise<{ killed: RedisNode; promoted: RedisNode }>;
  /** Signals one node (default SIGKILL) and resolves once it has exited; nothing is waited for in the cluster. */
  kill(node: RedisNode, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a dead node again (same port, its nodes.conf): it rejoins, as a replica where its slots moved on, and is in sync when this resolves. */
  restart(node: RedisNode): Promise<void>;
  /** Resolves once every live node says `cluster_state:ok`, all agree on who serves the 16384 slots, and every live replica is in sync. */
  healthy(): Promise<void>;
  /** A node's log (its redis.log). */
  log(node: RedisNode): string;
  /** Kills every node and deletes their directories; idempotent. */
  stop(): Promise<void>;
}

const SLOTS = 16384;

interface NodeView {
  id: string;
  address: string;
  flags: string[];
  masterId: string | undefined;
  slots: [number, number][];
}

const addressOf = (node: RedisNode) => `${node.host}:${node.port}`;

/** CLUSTER NODES as one view per node: `<id> <ip:port@bus[,hostname]> <flags> <master|-> <ping> <pong> <epoch> <link> <slot>...`. */
function parseClusterNodes(text: string): NodeView[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flags = '', master = '-', , , , , ...slots] = line.trim().split(' ');
      return {
        id,
        address: address.split('@')[0]!,
        flags: flags.split(','),
        masterId: master === '-' ? undefined : master,
        // `[slot->-id]` entries are slots being migrated: not served yet.
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [from, to = from] = s.split('-').map(Number);
            return [from!, to!] as [number, number];
          }),
      };
    });
}

/** Who serves which slots and who replicates whom, among the nodes not failing: what every node must agree on. */
function describeTopology(views: NodeView[]): string {
  const failing = (v: NodeView) => v.flags.includes('fail') || v.flags.includes('fail?');
  const addressById = new Map(views.map((v) => [v.id, v.address]));
  return views
    .filter((v) => !failing(v))
    .map((v) =>
      v.masterId === undefined
        ? `${v.address}=${v.slots.map((range) => range.join('-')).join(' ')}`
        : `${v.address}>${addressById.get(v.masterId) ?? v.masterId}`,
    )
    .sort()
    .join(',');
}

const isServingMaster = (view: NodeView) => view.flags.includes('master') && !view.flags.includes('fail') && view.slots.length > 0;
const firstSlot = (view: NodeView) => Math.min(...view.slots.map(([from]) => from));
const nodeOf = (address: string): RedisNode => {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
};

function runCli(cli: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const proc = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('error', reject);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolveRun(output);
      else reject(new Error(`redis-cli ${args.slice(0, 2).join(' ')} failed (${code ?? signal}):\n${output}`));
    });
  });
}

/**
 * Starts `masters × (1 + replicasPerMaster)` cluster-mode `redis-server`s on free loopback ports
 * (each its own directory and bus port), joins them with `redis-cli --cluster create`, and
 * resolves once every node says `cluster_state:ok`, all 16384 slots are served and every replica
 * is in sync. The processes die with this process; on any failure every node is killed first.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const { masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 2_000, timeoutMs = 60_000 } = options;
  if (masters < 3) throw new Error('a Redis Cluster needs at least 3 masters (a majority of them elects a replica)');
  const { cli } = findRedisBinaries();
  const count = masters * (1 + replicasPerMaster);
  const ports = await freePorts(count * 2);
  const { root, processes, stop, processOf } = redisProcessGroup('redis-cluster', 'a node of this cluster');
  const live = () => [...processes.values()].filter((p) => p.running());
  const view = async (node: RedisNode) => parseClusterNodes(String(await redisCommand(node, ['CLUSTER', 'NODES'])));
  /** The view of the first live node that answers. */
  const anyView = async (): Promise<NodeView[]> => {
    let lastError: unknown = new Error('no node of the cluster runs');
    for (const node of live()) {
      try {
        return await view(node);
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  };
  const servingMasters = async () => (await anyView()).filter(isServingMaster).sort((a, b) => firstSlot(a) - firstSlot(b));

  /** Throws the first reason the cluster is not healthy yet. */
  const checkHealthy = async (): Promise<true> => {
    let agreed: string | undefined;
    for (const node of live()) {
      const info = parseInfo(String(await redisCommand(node, ['CLUSTER', 'INFO'])));
      if (info.cluster_state !== 'ok') throw new Error(`${addressOf(node)}: cluster_state:${info.cluster_state}`);
      if (info.cluster_slots_ok !== String(SLOTS)) throw new Error(`${addressOf(node)}: cluster_slots_ok:${info.cluster_slots_ok}`);
      const views = await view(node);
      const topology = describeTopology(views);
      if (agreed !== undefined && topology !== agreed) throw new Error(`${addressOf(node)} sees ${topology}, another node ${agreed}`);
      agreed = topology;
      // Every live node serves slots or replicates one that does: a node that is neither is one still joining.
      const own = views.find((v) => v.flags.includes('myself'));
      if (!own || !(isServingMaster(own) || own.flags.includes('slave'))) throw new Error(`${addressOf(node)} neither serves slots nor replicates`);
      const replication = await redisInfo(node, 'replication');
      if (own.flags.includes('slave') && (replication.master_link_status !== 'up' || replication.master_sync_in_progress !== '0')) {
        throw new Error(`${addressOf(node)}: replica not in sync (master_link_status:${replication.master_link_status})`);
      }
    }
    const servingCount = agreed?.split(',').filter((entry) => /=\d/.test(entry)).length ?? 0;
    if (servingCount !== masters) throw new Error(`${servingCount} masters serve slots, expected ${masters}`);
    return true;
  };
  const healthy = async () => {
    await waitFor('the Redis Cluster to be healthy', checkHealthy, timeoutMs, 100);
  };

  try {
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const port = ports[i * 2]!;
        const dir = join(root, `node-${port}`);
        mkdirSync(dir);
        // prettier-ignore
        const args = [
          '--port', String(port), '--bind', '127.0.0.1',
          '--cluster-enabled', 'yes', '--cluster-port', String(ports[i * 2 + 1]!), '--cluster-config-file', join(dir, 'nodes.conf'),
          '--cluster-node-timeout', String(nodeTimeoutMs),
          // A replica fails over however long it was cut off from its master: a drill kills masters, not the network.
          '--cluster-replica-validity-factor', '0',
          '--dir', dir, '--logfile', join(dir, 'redis.log'),
          '--save', '', '--appendonly', 'no',
          // A replica (a restarted node, a migrated one) syncs at once instead of after the 5 s default delay.
          '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0',
        ];
        processes.set(`127.0.0.1:${port}`, await spawnRedisProcess({ port, dir, args }));
      }),
    );
    const nodes = [...processes.values()].map(({ host, port }) => ({ host, port }));
    await runCli(cli, ['--cluster', 'create', ...nodes.map(addressOf), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'], timeoutMs);
    await healthy();

    const seeds = nodes.map(addressOf).join(',');
    return {
      nodes,
      seeds,
      env: { REDIS_CLUSTER_NODES: seeds },
      masters: async () => (await servingMasters()).map((v) => nodeOf(v.address)),
      replicasOf: async (master) => {
        const views = await anyView();
        const id = views.find((v) => v.address === addressOf(master))?.id;
        return views.filter((v) => id !== undefined && v.masterId === id && !v.flags.includes('fail')).map((v) => nodeOf(v.address));
      },
      masterOfKey: async (key) => {
        const slot = Number(await redisCommand(live()[0] ?? nodes[0]!, ['CLUSTER', 'KEYSLOT', key]));
        const owner = (await servingMasters()).find((v) => v.slots.some(([from, to]) => slot >= from && slot <= to));
        if (!owner) throw new Error(`no master serves slot ${slot}`);
        return nodeOf(owner.address);
      },
      killMaster: async (index = 0) => {
        const serving = await servingMasters();
        const target = serving[index];
        if (!target) throw new Error(`no master ${index}: ${serving.length} serve slots`);
        const replicaIds = new Set((await anyView()).filter((v) => v.masterId === target.id && !v.flags.includes('fail')).map((v) => v.id));
        if (replicaIds.size === 0) throw new Error(`master ${target.address} has no replica to promote`);
        await processOf(nodeOf(target.address)).kill('SIGKILL');
        const promoted = await waitFor(
          `a replica of ${target.address} to serve its slots`,
          async () => {
            const now = await servingMasters();
            const successor = now.find((v) => replicaIds.has(v.id) && firstSlot(v) === firstSlot(target));
            if (!successor) throw new Error(`masters now: ${now.map((v) => v.address).join(', ')}`);
            return successor;
          },
          timeoutMs,
          100,
        );
        await healthy();
        return { killed: nodeOf(target.address), promoted: nodeOf(promoted.address) };
      },
      kill: (node, signal = 'SIGKILL') => processOf(node).kill(signal),
      restart: async (node) => {
        await processOf(node).start();
        await waitFor(
          `${addressOf(node)} to rejoin the cluster`,
          async () => {
            const info = parseInfo(String(await redisCommand(node, ['CLUSTER', 'INFO'])));
            if (info.cluster_state !== 'ok') throw new Error(`cluster_state:${info.cluster_state}`);
            return true;
          },
          timeoutMs,
          100,
        );
        await healthy();
      },
      healthy,
      log: (node) => processOf(node).log(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
