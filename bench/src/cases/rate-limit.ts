import type { BenchContext } from '../context';
import { runLoad } from '../load';

export interface RateLimitResults {
  limit: number;
  seconds: number;
  gateways: number;
  connectionsPerGateway: number;
  /** Answers that were not 429, per gateway and in total: the requests the limiter accepted. */
  acceptedPerGateway: number[];
  accepted: number;
  rejected: number;
  otherStatuses: Record<string, number>;
  /** The most accepted answers the client saw within any 60 s (client clock). */
  maxAcceptedInAnyWindow: number;
  /** Accepted in the 60 s window that starts with the first accepted request. */
  acceptedInFirstWindow: number;
  /** Times each gateway fell back to its in-memory limiter (its 'rate limiting degraded' log lines). */
  degradations: number[];
}

/**
 * One fresh token, two gateway instances sharing one Redis, both under load for the whole window:
 * the contract's sliding window must accept exactly the events bucket's limit, summed.
 */
export async function rateLimitCase(ctx: BenchContext, options: { seconds: number; limit: number; connectionsPerGateway: number }): Promise<RateLimitResults> {
  const { platform, log } = ctx;
  const names = ['rl-gateway-a', 'rl-gateway-b'];
  for (const name of names) await platform.add({ kind: 'gateway', name, env: { EVENTS_RATE_LIMIT: String(options.limit) } });
  try {
    const urls = platform
      .processes()
      .filter((p) => names.includes(p.name))
      .map((p) => p.url);
    const key = await platform.createApiKey({ name: 'bench rate limit' });
    // The target event is written straight to the database: a request would spend the new key's
    // budget, and the seeded key's events bucket is full of the throughput cases' requests.
    const { rows } = await ctx.db.events.query<{ id: string }>(
      `INSERT INTO events (id, workspace_id, name, starts_at) VALUES (gen_random_uuid(), $1, 'Rate limit target', now()) RETURNING id`,
      [ctx.identity.workspaceId],
    );
    const event = rows[0]!;
    const acceptedAt: number[] = [];
    let firstAcceptedSentAt = Number.POSITIVE_INFINITY;
    const other: Record<string, number> = {};
    log(`${options.seconds} s against ${urls.length} gateways, ${options.connectionsPerGateway} connections each`);
    const results = await Promise.all(
      urls.map((url) =>
        runLoad({
          url,
          connections: options.connectionsPerGateway,
          durationS: options.seconds,
          next: () => ({ method: 'GET', path: `/events/v0/events/${event.id}`, headers: { authorization: `Bearer ${key.token}` } }),
          onAnswer: (status, at, sentAt) => {
            if (status !== 429) {
              acceptedAt.push(at);
              firstAcceptedSentAt = Math.min(firstAcceptedSentAt, sentAt);
            }
            if (status !== 429 && status !== 200) other[status] = (other[status] ?? 0) + 1;
          },
        }),
      ),
    );
    acceptedAt.sort((a, b) => a - b);
    let maxInWindow = 0;
    for (let i = 0, j = 0; i < acceptedAt.length; i++) {
      while (acceptedAt[i]! - acceptedAt[j]! >= 60_000) j++;
      maxInWindow = Math.max(maxInWindow, i - j + 1);
    }
    // The first accepted request was counted by Redis after it was sent, so anything Redis accepted
    // a full window later arrived at least 60 s after that send: counting what arrived before then
    // counts exactly the first window, whatever the answers' own delays.
    const acceptedInFirstWindow = acceptedAt.filter((t) => t < firstAcceptedSentAt + 60_000).length;
    const degradations = names.map(
      (name) =>
        platform
          .logs(name)
          .split('\n')
          .filter((line) => line.includes('rate limiting degraded')).length,
    );
    if (degradations.some((d) => d > 0)) {
      for (const name of names)
        log(
          `  ${name}: ${platform
            .logs(name)
            .split('\n')
            .filter((line) => /degraded|restored/.test(line))
            .slice(0, 5)
            .join(' | ')}`,
        );
    }
    const acceptedPerGateway = results.map((r) => Object.entries(r.statusCounts).reduce((sum, [code, n]) => (code === '429' ? sum : sum + n), 0));
    return {
      limit: options.limit,
      seconds: options.seconds,
      gateways: urls.length,
      connectionsPerGateway: options.connectionsPerGateway,
      acceptedPerGateway,
      accepted: acceptedPerGateway.reduce((a, b) => a + b, 0),
      rejected: results.reduce((sum, r) => sum + (r.statusCounts['429'] ?? 0), 0),
      otherStatuses: other,
      maxAcceptedInAnyWindow: maxInWindow,
      acceptedInFirstWindow,
      degradations,
    };
  } finally {
    for (const name of names) await platform.kill(name, 'SIGTERM');
  }
}
