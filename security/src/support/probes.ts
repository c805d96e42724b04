import { percentile } from '@platform/testing';
import { describe, sleep, type Answer } from './http';
import { expectStatus, type Tenant } from './platform';

/**
 * A workspace's service as its users see it while a neighbour floods the platform: three
 * representative requests through the gateway, each measured in a loop of its own.
 */
export const PROBES = ['GET /pipelines', 'ticket validate', 'run trigger-to-start'] as const;
export type ProbeName = (typeof PROBES)[number];

/** Between two samples of one probe: the probes measure the platform, they must not be its load. */
const GAP_MS = 50;
/** How often a triggered run is looked at; trigger-to-start is read from the run's own timestamps, so this adds nothing to it. */
const RUN_POLL_MS = 50;
/** A run of B that has not ended by then is a failure of its own (and its loop stops: the pipeline is busy). */
const RUN_WAIT_MS = 60_000;
/** A probe request that takes longer is reported as unanswered (its latency then counts as this). */
const PROBE_TIMEOUT_MS = 30_000;
const ENDED = ['succeeded', 'failed', 'cancelled'];

export interface ProbedTenant {
  tenant: Tenant;
  pipelineId: string;
  ticketId: string;
}

export interface Samples {
  ms: Record<ProbeName, number[]>;
  /** Probe requests that were not answered as the contract says (each is a failure). */
  errors: string[];
}

export interface Summary {
  samples: number;
  p50: number;
  p99: number;
}

/** B's resources for the probes: a pipeline of small sample runs (one run done: its table exists) and an event with a ticket. */
export async function prepareProbes(tenant: Tenant): Promise<ProbedTenant> {
  const pipeline = expectStatus(
    await tenant.call('POST', '/pipelines/v3/pipelines', {
      name: `${tenant.name} probe`,
      source: { connector: 'sample', config: { records: 5 } },
      destination: { connector: 'postgres', config: { table: 'neighbours_probe' } },
    }),
    201,
    'probe pipeline',
  ).json.id as string;
  const event = expectStatus(
    await tenant.call('POST', '/events/v0/events', { name: `${tenant.name} probe event`, starts_at: '2030-06-01T20:00:00.000Z' }),
    201,
    'probe event',
  ).json.id as string;
  const ticketId = expectStatus(await tenant.call('POST', `/events/v0/events/${event}/tickets`, { holder_name: 'probe' }), 201, 'probe ticket').json
    .id as string;
  const probed = { tenant, pipelineId: pipeline, ticketId };
  const first = await triggerToStart(probed);
  if (typeof first === 'string') throw new Error(`the probe pipeline's first run: ${first}`);
  return probed;
}

const call = (b: ProbedTenant, method: string, path: string, body?: unknown): Promise<Answer> =>
  b.tenant.call(method, path, body, {}, { timeoutMs: PROBE_TIMEOUT_MS });

/** The run's created_at → started_at (both the platform's clocks), once it has ended; or what went wrong. */
async function triggerToStart(b: ProbedTenant): Promise<number | string> {
  const trigger = await call(b, 'POST', `/pipelines/v3/pipelines/${b.pipelineId}/runs`, { trigger: 'manual' });
  if (trigger.status !== 202) return `trigger: ${describe(trigger)}`;
  const path = `/pipelines/v3/pipelines/${b.pipelineId}/runs/${trigger.json.id}`;
  const deadline = Date.now() + RUN_WAIT_MS;
  let run = trigger.json;
  while (!ENDED.includes(run.status)) {
    if (Date.now() > deadline) return `run ${run.id} still ${run.status} ${RUN_WAIT_MS / 1000} s after its trigger`;
    await sleep(RUN_POLL_MS);
    const answer = await call(b, 'GET', path);
    if (answer.status !== 200) return `GET run: ${describe(answer)}`;
    run = answer.json;
  }
  if (run.status !== 'succeeded') return `run ${run.status}: ${JSON.stringify(run.error)}`;
  return Date.parse(run.started_at) - Date.parse(run.created_at);
}

/** One sample of a probe: its latency in ms, or what went wrong. */
async function sample(b: ProbedTenant, probe: ProbeName): Promise<number | string> {
  switch (probe) {
    case 'GET /pipelines': {
      const answer = await call(b, 'GET', '/pipelines/v3/pipelines?limit=100');
      return answer.status === 200 ? answer.ms : describe(answer);
    }
    case 'ticket validate': {
      const ticket = `/events/v0/tickets/${b.ticketId}`;
      const answer = await call(b, 'POST', `${ticket}/validate`, { gate: 'neighbours' });
      if (answer.status !== 200) return describe(answer);
      // Issued again for the next sample (not measured).
      const undo = await call(b, 'POST', `${ticket}/unvalidate`, { reason: 'neighbours probe' });
      return undo.status === 200 ? answer.ms : `unvalidate: ${describe(undo)}`;
    }
    case 'run trigger-to-start':
      return triggerToStart(b);
  }
}

/** Every probe in its own loop until `stop()` (a sample begun before is finished); a failed run stops its loop. */
export async function probe(b: ProbedTenant, stop: () => boolean): Promise<Samples> {
  const ms = Object.fromEntries(PROBES.map((p) => [p, [] as number[]])) as Record<ProbeName, number[]>;
  const errors: string[] = [];
  await Promise.all(
    PROBES.map(async (name) => {
      while (!stop()) {
        const result = await sample(b, name);
        if (typeof result === 'string') {
          errors.push(`${name}: ${result}`);
          if (name === 'run trigger-to-start') return;
        } else ms[name].push(result);
        await sleep(GAP_MS);
      }
    }),
  );
  return { ms, errors };
}

export function summarise(values: number[]): Summary {
  const sorted = [...values].sort((x, y) => x - y);
  return { samples: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}
