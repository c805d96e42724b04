import { z } from 'zod';

/**
 * Redis, one of three topologies (contract section 17), under the same variables in every
 * process: `REDIS_URL` (one server), `REDIS_CLUSTER_NODES` (seed nodes of a Redis Cluster), or
 * `REDIS_SENTINELS` with `REDIS_SENTINEL_MASTER` (the master Sentinel names, followed through
 * failovers). `REDIS_USERNAME` / `REDIS_PASSWORD` apply to every topology.
 */

export interface RedisNode {
  host: string;
  port: number;
}

/** `host:port,host:port,...`; an IPv6 host in brackets (`[::1]:7000`). */
const NodeList = z.string().transform((value, ctx) => {
  const nodes: RedisNode[] = [];
  for (const entry of value.split(',').map((s) => s.trim())) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) {
      ctx.addIssue({ code: 'custom', message: `must be host:port,host:port,... (got "${entry}")` });
      return z.NEVER;
    }
    nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return nodes;
});

/** The Redis variables of CommonConfig; `redisTarget` turns them into one topology. */
export const RedisConfig = z.object({
  REDIS_URL: z
    .string()
    .url()
    .refine((url) => /^rediss?:\/\//.test(url), 'must be a redis:// or rediss:// URL')
    .optional(),
  REDIS_CLUSTER_NODES: NodeList.optional(),
  REDIS_SENTINELS: NodeList.optional(),
  REDIS_SENTINEL_MASTER: z.string().min(1).max(200).optional(),
  REDIS_USERNAME: z.string().min(1).optional(),
  REDIS_PASSWORD: z.string().min(1).optional(),
});
export type RedisConfig = z.infer<typeof RedisConfig>;

/** Where a process finds Redis when no topology variable is set (npm start, tests). */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export type RedisTopology =
  { kind: 'standalone'; url: string } | { kind: 'cluster'; nodes: RedisNode[] } | { kind: 'sentinel'; sentinels: RedisNode[]; masterName: string };

/** A topology and the credentials that apply to it: what every connection of a process is made from. */
export interface RedisTarget {
  topology: RedisTopology;
  username?: string;
  password?: string;
}

/**
 * The one line that says why a mix of Redis variables is refused, or undefined when it names one
 * topology (or none: the default server).
 */
export function redisTopologyProblem(config: RedisConfig): string | undefined {
  const set = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => config[name] !== undefined);
  if (set.length > 1) return `${set.join(', ')}: set one Redis topology only (REDIS_URL, REDIS_CLUSTER_NODES, or REDIS_SENTINELS with REDIS_SENTINEL_MASTER)`;
  if (config.REDIS_SENTINELS !== undefined && config.REDIS_SENTINEL_MASTER === undefined) return 'REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS';
  if (config.REDIS_SENTINEL_MASTER !== undefined && config.REDIS_SENTINELS === undefined) return 'REDIS_SENTINELS: required with REDIS_SENTINEL_MASTER';
  return undefined;
}

/** The topology a process's Redis variables name (checked by parseConfig, so never a mix here). */
export function redisTarget(config: RedisConfig): RedisTarget {
  const topology: RedisTopology = config.REDIS_CLUSTER_NODES
    ? { kind: 'cluster', nodes: config.REDIS_CLUSTER_NODES }
    : config.REDIS_SENTINELS
      ? { kind: 'sentinel', sentinels: config.REDIS_SENTINELS, masterName: config.REDIS_SENTINEL_MASTER ?? 'mymaster' }
      : { kind: 'standalone', url: config.REDIS_URL ?? DEFAULT_REDIS_URL };
  return { topology, username: config.REDIS_USERNAME, password: config.REDIS_PASSWORD };
}

/** A target, or a bare `redis://` URL (tests and tools that have one server). */
export type RedisTargetLike = RedisTarget | string;

export function toRedisTarget(target: RedisTargetLike): RedisTarget {
  return typeof target === 'string' ? { topology: { kind: 'standalone', url: target } } : target;
}

/** A line for logs and banners: the topology and its nodes, never a password. */
export function describeRedisTarget(target: RedisTargetLike): string {
  const { topology } = toRedisTarget(target);
  const list = (nodes: RedisNode[]) => nodes.map((n) => `${n.host.includes(':') ? `[${n.host}]` : n.host}:${n.port}`).join(',');
  if (topology.kind === 'cluster') return `redis cluster: ${list(topology.nodes)}`;
  if (topology.kind === 'sentinel') return `redis sentinel: ${topology.masterName} via ${list(topology.sentinels)}`;
  const url = new URL(topology.url);
  url.password = '';
  url.username = '';
  return `redis: ${url.toString()}`;
}

/** `{name}` → `name`: a hash tag in a prefix would put every key under it in one cluster slot. */
export function withoutHashTag(prefix: string): string {
  return prefix.replace(/^\{(.*)\}$/, '$1');
}

/**
 * BullMQ's key prefix of one queue: `<QUEUE_PREFIX>:{<queue>}`, so the queue's keys
 * (`<QUEUE_PREFIX>:{<queue>}:<queue>:...`) share one hash slot, as BullMQ's scripts need on a
 * Redis Cluster, and each queue has a slot of its own (contract section 17). Every key of a
 * platform still starts with `<QUEUE_PREFIX>:`. A QUEUE_PREFIX written as a hash tag (`{name}`,
 * the old way to run on a cluster) loses its braces, or every queue would share its slot.
 */
export function queueKeyPrefix(queuePrefix: string, queueName: string): string {
  return `${withoutHashTag(queuePrefix)}:{${queueName}}`;
}
