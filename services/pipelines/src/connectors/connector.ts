import type pg from 'pg';
import type { z } from 'zod';
import type { AddressGuard } from '@platform/address-guard';
import type { WorkspaceId } from '@platform/core';

/** One record as a source yields it; the run checks that it is an object with an id. */
export type SourceRecord = Record<string, unknown>;

/** A record that passed validation: `id` is its key in the destination. */
export interface ValidRecord {
  id: string;
  data: SourceRecord;
}

export type RunErrorCode = 'source_error' | 'destination_error' | 'invalid_record';

/**
 * A connector failure with the run error it becomes; retryable ones get another attempt. Its
 * message is shown to the tenant as the run's error: the platform's own words, never a driver's
 * or a resolver's (no host, address, port, database or role); the cause is logged only.
 */
export class ConnectorError extends Error {
  override name = 'ConnectorError';
  constructor(
    readonly code: RunErrorCode,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a connector's addresses are judged by: on create in the API, and again when a run connects. */
export interface ConnectorPolicy {
  /** The platform's one SSRF guard; CONNECTORS_ALLOW_PRIVATE lets private addresses through. */
  addressGuard: AddressGuard;
  /** Databases of the platform itself (lower case), which a connection_url may never name. */
  platformDatabases: ReadonlySet<string>;
}

/** What the worker process lends connectors: settings and the shared pool of the pipelines database. */
export interface ConnectorRuntime extends ConnectorPolicy {
  /** The pipelines database, the postgres destination's default. */
  defaultPool: pg.Pool;
  httpTimeoutMs: number;
  httpMaxBytes: number;
}

/** A config field a connector refuses after its schema accepted it; `field` is the path inside `config`. */
export interface ConfigProblem {
  field: string;
  code: string;
  message: string;
}

export interface ReadContext {
  /** Only records updated after this instant; null = all. */
  since: Date | null;
  batchSize: number;
  /** Aborted when the run must stop at once. */
  signal: AbortSignal;
  runtime: ConnectorRuntime;
}

export interface WriteContext {
  workspaceId: WorkspaceId;
  runtime: ConnectorRuntime;
}

/**
 * Thrown by a guarded write whose run no longer belongs to the attempt (cancelled, timed out,
 * replaced): the batch was rolled back, nothing of it landed.
 */
export class RunNotHeldError extends Error {
  override name = 'RunNotHeldError';
}

/** How a run's write is bounded by the run (contract section 19: nothing lands after its end). */
export interface WriteGuard {
  /** Aborted when the run must stop at once: a write in flight is abandoned and rolled back. */
  signal: AbortSignal;
  /**
   * Calls `commit` (the batch's COMMIT) while the attempt holds the run, which cannot end meanwhile;
   * false when it no longer holds it (`commit` not called: the writer rolls back).
   */
  commitWhileHeld(commit: () => Promise<void>): Promise<boolean>;
}

export interface DestinationWriter {
  /**
   * Writes one batch idempotently (a retried run writes no duplicates); returns the records
   * written. With `guard`, in a transaction that commits only while the run is held, else throws
   * RunNotHeldError (or the abort's reason) with nothing written.
   */
  write(records: ValidRecord[], guard?: WriteGuard): Promise<number>;
  close(): Promise<void>;
}

/** What a connector check (POST /connectors/check) answers: the platform's own words, never a driver's. */
export interface CheckResult {
  status: 'succeeded' | 'failed';
  message: string;
}

export interface CheckContext {
  workspaceId: WorkspaceId;
  /** The API process's runtime: its own pool on the pipelines database, http-json bounded by the check's deadline. */
  runtime: ConnectorRuntime;
  /** Aborted at the check's deadline (8 s by default). */
  signal: AbortSignal;
}

/** The check's answer for a failure a connector threw: a ConnectorError's message (platform words), else a fixed one. */
export function failedCheck(err: unknown, signal: AbortSignal): CheckResult {
  if (err instanceof ConnectorError) return { status: 'failed', message: err.message };
  if (signal.aborted) return { status: 'failed', message: 'the check did not finish in time' };
  return { status: 'failed', message: 'the check failed on our side' };
}

interface ConnectorBase<C> {
  name: string;
  /** One line for the connector catalog (GET /connectors). */
  description: string;
  /** Strict: unknown fields are refused. Parsed at creation and again by the worker. */
  config: z.ZodType<C>;
  /** The config as the API shows it (secrets masked). */
  render?(config: C): object;
  /** Checks that need the policy or DNS (addresses, platform databases); create refuses the pipeline with these. */
  verify?(config: C, policy: ConnectorPolicy): Promise<ConfigProblem[]>;
  /** Tries the config as a run would (same address guard, pinned connection); failures are `failed`, not thrown. */
  check(config: C, context: CheckContext): Promise<CheckResult>;
}

export interface SourceConnector<C = unknown> extends ConnectorBase<C> {
  kind: 'source';
  /** Yields records in batches of at most `batchSize`; a batch is one step of a run. */
  read(config: C, context: ReadContext): AsyncIterable<SourceRecord[]>;
}

export interface DestinationConnector<C = unknown> extends ConnectorBase<C> {
  kind: 'destination';
  open(config: C, context: WriteContext): Promise<DestinationWriter>;
}
