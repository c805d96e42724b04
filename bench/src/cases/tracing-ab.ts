import { startOtlpReceiver } from '@platform/testing';
import type { BenchContext } from '../context';
import type { RefBuild } from '../ref-build';
import { gatewayAbCase, type AbResults } from './gateway-ab';
import type { ProxyPlan } from './proxy';

/** The commit before tracing (issue 18): the default A of tracing-ab. */
export const BEFORE_TRACING_REF = '3237a93';

export interface TracingAbResults {
  /** A: the gateway before tracing (`--a-ref`), a second A, B: this checkout's, tracing off (absent with `--tracing=on`). */
  off?: AbResults;
  /** A: this checkout's gateway, tracing off; B: the same with tracing on, exporting to a receiver. */
  on: AbResults & { exports: number; exportedKiB: number };
}

/**
 * The gateway hot path's cost of tracing (issue 18), in two A/Bs of `gatewayAbCase`: with tracing off
 * this checkout's gateway against the gateway before tracing (it must cost what that one did: B's
 * loss within the A-vs-A spread), then with tracing on (every request a server span, a client span
 * and the rate limiter's Redis span, sampled, batched and exported as OTLP/protobuf to a receiver on
 * 127.0.0.1) against it off, to report the cost.
 * `npm run bench -- --only=tracing-ab [--a-ref=REF] [--rounds=N] [--tracing=on]` (`on`: the second A/B alone).
 */
export async function tracingAbCase(
  ctx: BenchContext,
  plan: Omit<ProxyPlan, 'profileS'>,
  build: RefBuild,
  redisPid: number | undefined,
  onOnly = false,
): Promise<TracingAbResults> {
  let off: AbResults | undefined;
  if (!onOnly) {
    ctx.log(`tracing off: the gateway of ${build.ref} (A, and a second A) vs this checkout's (B)`);
    off = await gatewayAbCase(ctx, plan, { bEnv: {}, a: build, secondA: true }, redisPid);
  }
  const receiver = await startOtlpReceiver();
  try {
    const bEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
    ctx.log(`tracing on: this checkout's gateway, off (A) vs on (B, ${JSON.stringify(bEnv)})`);
    const on = await gatewayAbCase(ctx, plan, { bEnv, secondA: true, nameSuffix: '-traced' }, redisPid);
    // B exported its last batch when it was stopped.
    const exports = receiver.requests();
    if (exports === 0) throw new Error('the traced gateway exported nothing');
    ctx.log(`traced gateway: ${exports} exports, ${Math.round(receiver.protobufBytes() / 1024)} KiB`);
    return { ...(off ? { off } : {}), on: { ...on, exports, exportedKiB: Math.round(receiver.protobufBytes() / 1024) } };
  } finally {
    await receiver.close();
  }
}
