import { z } from 'zod';
import { listOf, Uuid, UtcTimestamp } from '@platform/core';
import { RenderedDestinationSpec, RenderedSourceSpec } from './connectors';
import { RenderedSchedule } from './schedule';

/**
 * The pipelines service's resources as the API returns them (contract section 10). The render
 * functions are typed against these schemas and the API reference is generated from them.
 */

export const RUN_TRIGGERS = ['manual', 'schedule', 'webhook', 'backfill'] as const;
export const RUN_STATUSES = ['pending', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const CONCURRENCY_POLICIES = ['reject', 'enqueue'] as const;
/** run_timeout_seconds: null (no limit) or this range (contract section 19). */
export const RUN_TIMEOUT_SECONDS = { min: 10, max: 86_400 } as const;
/** The most pending runs a pipeline holds (contract section 19). */
export const MAX_PENDING_RUNS = 20;

export const ConcurrencyPolicyDoc = z.enum(CONCURRENCY_POLICIES).meta({
  description:
    'What a trigger (or a retry) does while a run of the pipeline is `queued` or `running`: `reject` answers 409 (the default); `enqueue` answers 202 with a `pending` run, ' +
    `which becomes \`queued\` once the runs before it ended, one at a time in trigger order (at most ${MAX_PENDING_RUNS} pending, then 409 \`too_many_pending\`).`,
});

export const RunTimeoutSecondsDoc = z
  .int()
  .min(RUN_TIMEOUT_SECONDS.min)
  .max(RUN_TIMEOUT_SECONDS.max)
  .nullable()
  .meta({
    description:
      'A run `running` longer than this ends `failed` with `error.code` `timeout` (within 5 s of the limit), is not retried and writes nothing more; null: no limit (the default).',
    examples: [3600],
  });

const EXAMPLE_PIPELINE_ID = '7e9a1c3e-5b7d-4f9a-b1c3-e5a7c9e1b3d5';
const EXAMPLE_RUN_ID = 'c1e3a5b7-9d1f-4b3d-8f5a-7c9e1a3c5e7f';

/** `schedule` as the API shows it (the cron's `timezone` spelled out). */
const ScheduleView = RenderedSchedule.nullable().meta({
  description:
    'When ticks create runs (`trigger: "schedule"`); null: only when triggered. A tick while a run is active creates no run; ticks missed while no scheduler ran give one run, for the latest.',
});

export const Pipeline = z
  .object({
    id: Uuid,
    name: z.string(),
    status: z.enum(['active', 'paused']),
    source: RenderedSourceSpec,
    destination: RenderedDestinationSpec,
    last_successful_run_at: UtcTimestamp.nullable().meta({ description: '`started_at` of the last succeeded run that was not a dry run.' }),
    schedule: ScheduleView,
    next_run_at: UtcTimestamp.nullable().meta({ description: 'The next tick of the schedule; null without a schedule or while paused.' }),
    concurrency_policy: ConcurrencyPolicyDoc,
    run_timeout_seconds: RunTimeoutSecondsDoc,
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'Pipeline',
    description: 'Moves records from a source connector to a destination connector, one run at a time.',
    examples: [
      {
        id: EXAMPLE_PIPELINE_ID,
        name: 'Sample to warehouse table',
        status: 'active',
        source: { connector: 'sample', config: { records: 100, seed: 0 } },
        destination: { connector: 'postgres', config: { table: 'sample_records' } },
        last_successful_run_at: null,
        schedule: { type: 'cron', cron: '0 3 * * *', timezone: 'Europe/Berlin' },
        next_run_at: '2024-12-02T02:00:00.000Z',
        concurrency_policy: 'reject',
        run_timeout_seconds: null,
        created_at: '2024-12-01T09:30:00.000Z',
      },
    ],
  });
export type Pipeline = z.infer<typeof Pipeline>;

export const Run = z
  .object({
    id: Uuid,
    pipeline_id: Uuid,
    status: z.enum(RUN_STATUSES).meta({
      description:
        '`pending` (waiting behind the active run, `concurrency_policy: "enqueue"`) → `queued` → `running` → `succeeded` | `failed`; `pending`, `queued` or `running` → `cancelled`.',
    }),
    trigger: z.enum(RUN_TRIGGERS),
    since: UtcTimestamp.nullable().meta({ description: 'Only records updated after it are read; null: all.' }),
    dry_run: z.boolean().meta({ description: 'Reads and validates but writes nothing.' }),
    attempts: z.int().min(0).meta({ description: 'How often a worker started the run (at most 3).' }),
    stats: z.object({ records_read: z.int().min(0), records_written: z.int().min(0) }),
    error: z
      .object({
        code: z.string().meta({
          description: '`source_error`, `destination_error`, `invalid_record`, `timeout`, `worker_lost`, `attempts_exhausted` or `internal_error`.',
        }),
        message: z.string(),
      })
      .nullable()
      .meta({ description: 'Why a `failed` run failed; null otherwise.' }),
    created_at: UtcTimestamp,
    started_at: UtcTimestamp.nullable(),
    finished_at: UtcTimestamp.nullable(),
    scheduled_for: UtcTimestamp.nullable().meta({
      description: 'The schedule tick that created the run; null on every run a tick did not create (a `schedule` trigger sent through the API included).',
    }),
    retry_of: Uuid.nullable().meta({ description: 'The run this run retries (`POST .../runs/{run_id}/retry`); null when it retries nothing.' }),
  })
  .meta({
    id: 'Run',
    description: 'One run of a pipeline.',
    examples: [
      {
        id: EXAMPLE_RUN_ID,
        pipeline_id: EXAMPLE_PIPELINE_ID,
        status: 'queued',
        trigger: 'manual',
        since: null,
        dry_run: false,
        attempts: 0,
        stats: { records_read: 0, records_written: 0 },
        error: null,
        created_at: '2024-12-01T09:31:00.000Z',
        started_at: null,
        finished_at: null,
        scheduled_for: null,
        retry_of: null,
      },
    ],
  });
export type Run = z.infer<typeof Run>;

export const RunList = listOf(Run, 'RunList');
export const PipelineList = listOf(Pipeline, 'PipelineList');

export const RunLogLine = z
  .object({
    id: Uuid.meta({ description: 'Time-ordered: lines sort by `at`, then `id`, in the order they were written.' }),
    run_id: Uuid,
    attempt: z.int().min(0).meta({ description: 'The attempt the line belongs to; 0 before the first attempt (queued).' }),
    at: UtcTimestamp.meta({ description: 'When the change the line tells was committed; lines of one change share it.' }),
    level: z.enum(['info', 'warn', 'error']).meta({ description: '`error` for failures, `warn` for retries, `info` otherwise.' }),
    message: z.string(),
    data: z.record(z.string(), z.unknown()).nullable().meta({
      description:
        "queued: `{ trigger }`; progress: `{ records_read, records_written }` so far; retry: `{ error: { code, message } }`; end: `{ status, records_read, records_written, error }`; an attempt's start: null.",
    }),
  })
  .meta({
    id: 'RunLogLine',
    description: "One line of a run's log, written in the same transaction as the change it tells.",
    examples: [
      {
        id: '0193b4c2-5e00-7000-8000-00000000002a',
        run_id: EXAMPLE_RUN_ID,
        attempt: 1,
        at: '2024-12-01T09:31:02.000Z',
        level: 'info',
        message: 'Step 1: 500 records read, 500 written so far.',
        data: { records_read: 500, records_written: 500 },
      },
    ],
  });
export type RunLogLine = z.infer<typeof RunLogLine>;

export const RunLogList = listOf(RunLogLine, 'RunLogList');

export const EXAMPLE_IDS = { pipeline: EXAMPLE_PIPELINE_ID, run: EXAMPLE_RUN_ID };

export const CONNECTOR_KINDS = ['source', 'destination'] as const;

export const ConnectorInfo = z
  .object({
    name: z.string(),
    kind: z.enum(CONNECTOR_KINDS),
    description: z.string(),
    config_schema: z.record(z.string(), z.unknown()).meta({
      description: "JSON Schema (2020-12) of the connector's `config`, generated from the schema `POST /pipelines` validates it with.",
    }),
  })
  .meta({
    id: 'Connector',
    description: 'A connector a pipeline may use as its source or destination.',
    examples: [
      {
        name: 'sample',
        kind: 'source',
        description: 'Generated records (up to 100,000, deterministic per seed), for trying pipelines without an external system.',
        config_schema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { records: { default: 100, type: 'integer', minimum: 1, maximum: 100000 } },
          additionalProperties: false,
        },
      },
    ],
  });
export type ConnectorInfo = z.infer<typeof ConnectorInfo>;

export const ConnectorList = listOf(ConnectorInfo, 'ConnectorList');

export const ConnectorCheck = z
  .object({
    status: z.enum(['succeeded', 'failed']),
    message: z.string().meta({ description: "What the check found, in the platform's words (never a driver's, never what a name resolved to)." }),
  })
  .meta({ id: 'ConnectorCheck', examples: [{ status: 'succeeded', message: 'Connected; the table sample_records is ready.' }] });
export type ConnectorCheck = z.infer<typeof ConnectorCheck>;
