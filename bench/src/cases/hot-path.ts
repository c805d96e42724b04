import { Redis } from 'ioredis';
import type { BenchContext } from '../context';
import { runLoad } from '../load';
import { sleep } from '../stats';
import { moreTickets } from './proxy';

export interface HotPathResults {
  requests: number;
  ok: number;
  /** Transactions (committed + rolled back) on the gateway's database during the requests. */
  gatewayDbTransactions: number;
  /**
   * How long the counting lasted, and how many of the gateway's periodic queries fit in it: the
   * batched last_used_at write (every 5 s) and the key cache's re-read of a key (every 30 s).
   */
  windowS: number;
  periodicQueriesPossible: number;
  dbQueriesPerRequest: number;
  /** Commands the gateway's own connections sent to Redis (MONITOR, script internals excluded). */
  gatewayRedisCommands: number;
  redisRoundTripsPerRequest: number;
  gatewayRedisCommandNames: Record<string, number>;
  /** INFO commandstats deltas of the whole Redis (every process, script internals included). */
  commandstatsDelta: Record<string, number>;
}

async function transactions(ctx: BenchContext, database: string): Promise<number> {
  await ctx.db.admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await ctx.db.admin.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [database]);
  return Number(rows[0]?.n ?? Number.NaN);
}

async function commandstats(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const out: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[match[1]!] = Number(match[2]);
  return out;
}

/**
 * Counts, not estimates, what N proxied ticket validations cost the gateway in backend round
 * trips: its database's transaction counter (pg_stat_database; pg_stat_statements is not
 * preloaded on this server) and the commands its Redis connections send (MONITOR).
 */
export async function hotPathCase(ctx: BenchContext, requests: number): Promise<HotPathResults> {
  const { platform } = ctx;
  const tickets = await moreTickets(ctx, requests);
  let i = 0;
  const redis = new Redis(platform.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const monitor = await redis.monitor();
  try {
    const database = new URL(platform.databaseUrls.gateway).pathname.slice(1);
    // One request first so the key is cached (a restarted gateway looks it up once); then wait:
    // PostgreSQL publishes a backend's counters when it goes idle, at most once a second.
    const warm = await fetch(`${platform.gatewayUrl}/events/v0/events/${tickets[0]}`, { headers: { authorization: `Bearer ${platform.token}` } });
    await warm.arrayBuffer();
    await sleep(1_500);
    const clients = (await redis.client('LIST')) as string;
    const gatewayAddresses = new Set(
      clients
        .split('\n')
        .filter((line) => / name=gateway( |$)/.test(line))
        .map((line) => /addr=(\S+)/.exec(line)?.[1])
        .filter((a): a is string => !!a),
    );
    const names: Record<string, number> = {};
    let gatewayCommands = 0;
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (!gatewayAddresses.has(source)) return;
      gatewayCommands++;
      const name = String(args[0]).toLowerCase();
      names[name] = (names[name] ?? 0) + 1;
    });
    const statsBefore = await commandstats(redis);
    const txBefore = await transactions(ctx, database);
    const windowStart = Date.now();
    const result = await runLoad({
      url: platform.gatewayUrl,
      connections: 10,
      amount: requests,
      next: () => ({
        method: 'POST',
        path: `/events/v0/tickets/${tickets[i++ % tickets.length]}/validate`,
        headers: { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' },
        body: '{"gate":"main-entrance"}',
      }),
    });
    await sleep(1_500);
    const txAfter = await transactions(ctx, database);
    const windowS = (Date.now() - windowStart) / 1000;
    const statsAfter = await commandstats(redis);
    const delta: Record<string, number> = {};
    for (const [name, calls] of Object.entries(statsAfter)) if (calls - (statsBefore[name] ?? 0) > 0) delta[name] = calls - (statsBefore[name] ?? 0);
    delete delta.info;
    const total = result.ok + result.non2xx;
    return {
      requests: total,
      ok: result.ok,
      gatewayDbTransactions: txAfter - txBefore,
      windowS,
      periodicQueriesPossible: Math.ceil(windowS / 5) + Math.ceil(windowS / 30),
      dbQueriesPerRequest: (txAfter - txBefore) / total,
      gatewayRedisCommands: gatewayCommands,
      redisRoundTripsPerRequest: gatewayCommands / total,
      gatewayRedisCommandNames: names,
      commandstatsDelta: delta,
    };
  } finally {
    monitor.disconnect();
    redis.disconnect();
  }
}
