import { BUCKET_LIMITS, type BucketName } from '@platform/core';
import { adminCall, type BenchContext } from '../context';
import type { RefBuild } from '../ref-build';
import { sleep } from '../stats';
import { gatewayAbCase, type AbGateway, type AbResults } from './gateway-ab';
import type { ProxyPlan } from './proxy';

/** The commit before per-key limits and usage counting (3a4d14a, contract section 16): the default A of keys-ab. */
export const BEFORE_KEY_LIMITS_REF = '8afd5ef';

/** The highest per-key limit the admin API takes (contract section 16), far above what B sends in a minute. */
const KEY_LIMIT = 100_000;

interface UsageBucket {
  start: string;
  requests: number;
  by_status: Record<'2xx' | '3xx' | '4xx' | '429' | '5xx', number>;
}

export interface KeysAbResults extends AbResults {
  bKey: { id: string; rateLimits: Record<BucketName, number> };
  /** X-RateLimit-Limit each gateway answered its key's first request with. */
  limitHeaders: Partial<Record<AbGateway, string | null>>;
  /** B's key's usage as GET .../usage answered after the rounds, and the requests B answered. */
  usage: { data: UsageBucket[]; requests: number; byStatus: UsageBucket['by_status']; bAnswered: number; inFlightBound: number };
}

/**
 * The hot path's cost with per-key limits and usage counting on (contract section 16) against the
 * gateway before them: `gatewayAbCase` with A (and a second A, for the A-vs-A spread) from
 * `build` and B this checkout's gateway, each with its own key; B's key has its own rate_limits in
 * every bucket, so B takes the per-key limit path and counts usage on every request. Afterwards
 * B's key's usage must hold what B answered.
 * `npm run bench -- --only=keys-ab [--a-ref=REF]`.
 */
export async function keysAbCase(ctx: BenchContext, plan: Omit<ProxyPlan, 'profileS'>, build: RefBuild, redisPid: number | undefined): Promise<KeysAbResults> {
  const { workspaceId } = ctx.platform;
  const keysPath = `/workspaces/${workspaceId}/api-keys`;
  const createKey = (name: string) => adminCall<{ id: string; token: string }>(ctx, 'POST', keysPath, { name });
  const [a, a2, b] = [await createKey('bench A'), await createKey('bench A2'), await createKey('bench B')];
  const rateLimits = Object.fromEntries((Object.keys(BUCKET_LIMITS) as BucketName[]).map((bucket) => [bucket, KEY_LIMIT])) as Record<BucketName, number>;
  const patched = await adminCall<{ rate_limits: Record<string, number> | null }>(ctx, 'PATCH', `${keysPath}/${b.id}`, { rate_limits: rateLimits });
  if (Object.entries(rateLimits).some(([bucket, limit]) => patched.rate_limits?.[bucket] !== limit))
    throw new Error(`B's key kept rate_limits ${JSON.stringify(patched.rate_limits)}`);
  ctx.log(`B's key ${b.id}: rate_limits ${JSON.stringify(rateLimits)}`);

  const limitHeaders: KeysAbResults['limitHeaders'] = {};
  const ab = await gatewayAbCase(
    ctx,
    plan,
    {
      bEnv: {},
      a: build,
      secondA: true,
      tokens: { gateway: a.token, 'gateway-a2': a2.token, 'gateway-b': b.token },
      // One request per gateway shows which limit it applies: B its key's, A the platform's.
      atStart: async (gateways) => {
        for (const [name, gateway] of Object.entries(gateways)) {
          if (!gateway) continue;
          const res = await fetch(`${gateway.url}/events/v0/events?limit=1`, { headers: { authorization: `Bearer ${gateway.token}` } });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`${name}: GET /events/v0/events answered ${res.status}`);
          limitHeaders[name as AbGateway] = res.headers.get('x-ratelimit-limit');
        }
        ctx.log(`X-RateLimit-Limit: ${JSON.stringify(limitHeaders)}`);
        if (limitHeaders['gateway-b'] !== String(KEY_LIMIT))
          throw new Error(`B does not apply its key's limit: X-RateLimit-Limit ${limitHeaders['gateway-b']}`);
      },
    },
    redisPid,
  );

  // B's probe and every answer of its runs; B flushed its counts when it stopped (and every 5 s before).
  const bAnswered = (ab.answers['gateway-b'] ?? 0) + 1;
  const inFlightBound = ab.runs.filter((r) => r.variant === 'gateway-b').reduce((sum, r) => sum + r.connections, 0) + 10;
  const usagePath = `${keysPath}/${b.id}/usage`;
  let data: UsageBucket[] = [];
  for (let tries = 0; tries < 20; tries++) {
    ({ data } = await adminCall<{ data: UsageBucket[] }>(ctx, 'GET', usagePath));
    if (data.reduce((sum, d) => sum + d.requests, 0) >= bAnswered) break;
    await sleep(1_000);
  }
  const byStatus = { '2xx': 0, '3xx': 0, '4xx': 0, '429': 0, '5xx': 0 };
  for (const d of data) for (const status of Object.keys(byStatus) as (keyof typeof byStatus)[]) byStatus[status] += d.by_status[status];
  const requests = data.reduce((sum, d) => sum + d.requests, 0);
  ctx.log(`GET /admin/v1${usagePath}: ${JSON.stringify({ data })}`);
  ctx.log(
    `B's key counted ${requests} requests ${JSON.stringify(byStatus)}; B answered ${bAnswered} (more by at most the ${inFlightBound} in flight when a run ended)`,
  );
  return { ...ab, bKey: { id: b.id, rateLimits }, limitHeaders, usage: { data, requests, byStatus, bAnswered, inFlightBound } };
}
