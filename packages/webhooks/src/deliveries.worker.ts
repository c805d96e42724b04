import { UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { Agent, request, type Dispatcher } from 'undici';
import { inConsumerSpan, queueKeyPrefix, type Logger, type WorkspaceId } from '@platform/core';
import { createAddressGuard, hostOfUrl, NOT_PUBLIC_MESSAGE } from '@platform/address-guard';
import { forgetPending, workspaceOf } from './deliveries.fairness';
import { DEFAULT_DELIVERY_TIMEOUT_MS, DEFAULT_RETRY_SCHEDULE_MS, DELIVERY_JOB_NAME, DeliveryJob, priorAttempts } from './deliveries.queue';
import type { Sql } from './sql';
import { webhookSignatureHeader } from './webhook-signature';
import { webhooksStore, type EndpointRow } from './webhooks.store';

/**
 * The delay before the next attempt of a job whose attempt failed, or -1 after the last step (BullMQ
 * then fails the job). `attemptsMade`: BullMQ's count, the failed attempt included; `data`: the job's
 * payload, whose `attempts_made` (a requeued retry) counts the attempts made before the job was added.
 */
export function retryDelay(schedule: readonly number[], attemptsMade: number, data: unknown): number {
  return schedule[attemptsMade + priorAttempts(data) - 1] ?? -1;
}

/** The error recorded for an attempt not sent because the endpoint was disabled: it ends the job, as 410 Gone does. */
export const NOT_SENT_DISABLED = 'not sent: the endpoint is disabled';

const MAX_ERROR_LENGTH = 1000;
// Only the status matters; the rest of a response is read up to this size, then dropped.
const MAX_RESPONSE_BYTES = 64 * 1024;
const publicGuard = createAddressGuard();

export type AttemptOutcome =
  | { status: 'succeeded'; responseStatus: number }
  | { status: 'failed'; responseStatus: number | null; error: string; gone: boolean }
  /** Nothing was sent: see UndeliverableReason. */
  | { status: 'undeliverable'; reason: UndeliverableReason };

/**
 * Why a delivery job could not be made. `unknown_endpoint`: no such endpoint in this database
 * (deleted since the event was enqueued, or a job of another platform sharing the Redis and its
 * queue prefix); `endpoint_disabled`: disabled since (recorded as a failed delivery, since the
 * endpoint is there to show it); `invalid_job`: the payload does not parse.
 */
export const UNDELIVERABLE_REASONS = ['unknown_endpoint', 'endpoint_disabled', 'invalid_job'] as const;
export type UndeliverableReason = (typeof UNDELIVERABLE_REASONS)[number];

/** The failedReason of a job that could not be delivered, as BullMQ keeps it. */
export function undeliverableMessage(reason: UndeliverableReason): string {
  return `undeliverable: ${reason}`;
}

export interface AttemptOptions {
  sql: Sql;
  /** HTTP client; with allowPrivate false it must connect through publicGuard.lookup. */
  dispatcher: Dispatcher;
  timeoutMs: number;
  allowPrivate: boolean;
  now?: () => Date;
}

/** The codes of an error and its causes (undici wraps the socket's error). */
function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') codes.push(e.code);
  }
  return codes;
}

/**
 * A failed attempt in the platform's own words: the record is shown to the tenant, so it never
 * carries a driver's text, an address a name resolved to, or a port (the guard's refusal included).
 */
function describe(err: unknown, timeoutMs: number): string {
  const error = err as { name?: string } | undefined;
  if (error?.name === 'TimeoutError' || error?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const codes = errorCodes(err);
  const has = (...wanted: string[]) => codes.some((code) => wanted.includes(code));
  if (has('ENONPUBLICADDRESS')) return NOT_PUBLIC_MESSAGE;
  if (has('ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME')) return 'the host name does not resolve';
  if (has('ECONNREFUSED')) return 'connection refused';
  if (has('UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT')) return `timed out after ${timeoutMs} ms`;
  if (codes.some((code) => /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|HOSTNAME_MISMATCH)/.test(code))) return 'TLS handshake failed';
  if (has('ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED')) return 'connection closed by the receiver';
  return 'request failed';
}

/** The secrets a delivery is signed with: the current one, and during a rotation the previous one. */
function signingSecrets(endpoint: EndpointRow, now: Date): string[] {
  const previousValid = endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now;
  return previousValid ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
}

async function post(endpoint: EndpointRow, job: DeliveryJob, options: AttemptOptions): Promise<{ responseStatus: number | null; error: string | null }> {
  try {
    // DNS may have changed since the endpoint was saved: literal addresses are checked here, names by the
    // dispatcher's connect-time lookup, which resolves once and connects to what it checked.
    if (!options.allowPrivate) publicGuard.checkLiteral(hostOfUrl(endpoint.url));
    const now = options.now?.() ?? new Date();
    const body = JSON.stringify(job.event);
    const sentAt = Math.floor(now.getTime() / 1000);
    const response = await request(endpoint.url, {
      method: 'POST',
      dispatcher: options.dispatcher,
      signal: AbortSignal.timeout(options.timeoutMs),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'platform-webhooks/1',
        'webhook-id': job.event.id,
        'webhook-timestamp': String(sentAt),
        'webhook-signature': webhookSignatureHeader(signingSecrets(endpoint, now), job.event.id, sentAt, body),
      },
      body,
    });
    await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => undefined);
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    return { responseStatus: response.statusCode, error: ok ? null : `receiver answered ${response.statusCode}` };
  } catch (err) {
    return { responseStatus: null, error: describe(err, options.timeoutMs) };
  }
}

/**
 * One delivery attempt of one event to one endpoint, recorded in `webhook_deliveries`. Any 2xx
 * succeeds; 410 Gone also disables the endpoint. Redirects are not followed (they fail the attempt).
 */
export async function attemptDelivery(job: DeliveryJob, attempt: number, options: AttemptOptions): Promise<AttemptOutcome> {
  const store = webhooksStore(options.sql);
  // The workspace comes from the outbox row the relay read, not from a request.
  const workspaceId = job.event.workspace_id as WorkspaceId;
  const endpoint = await store.findEndpoint(workspaceId, job.endpoint_id);
  if (!endpoint) return { status: 'undeliverable', reason: 'unknown_endpoint' };
  if (!endpoint.enabled) {
    await store.insertDelivery(workspaceId, {
      endpointId: endpoint.id,
      eventId: job.event.id,
      eventType: job.event.type,
      attempt,
      status: 'failed',
      responseStatus: null,
      error: NOT_SENT_DISABLED,
    });
    return { status: 'undeliverable', reason: 'endpoint_disabled' };
  }

  const { responseStatus, error } = await post(endpoint, job, options);
  const succeeded = error === null;
  await store.insertDelivery(workspaceId, {
    endpointId: endpoint.id,
    eventId: job.event.id,
    eventType: job.event.type,
    attempt,
    status: succeeded ? 'succeeded' : 'failed',
    responseStatus,
    error,
  });
  if (succeeded) return { status: 'succeeded', responseStatus: responseStatus! };
  const gone = responseStatus === 410;
  if (gone) await store.disableEndpoint(workspaceId, endpoint.id, 'receiver answered 410 Gone');
  return { status: 'failed', responseStatus, error, gone };
}

/** BullMQ's own defaults, named: a crashed process's attempt is made again within about a minute. */
const DEFAULT_LOCK_DURATION_MS = 30_000;
const DEFAULT_STALLED_INTERVAL_MS = 30_000;

export interface DeliveryWorkerOptions {
  sql: Sql;
  /** Redis for BullMQ: ioredis options, or an ioredis client made with `maxRetriesPerRequest: null`. */
  connection: ConnectionOptions;
  /** The service's delivery queue (deliveryQueueName). */
  queueName: string;
  /** The deployment's queue key prefix (QUEUE_PREFIX), the same as the producer's. */
  prefix: string;
  /** Delays before each retry, in ms (default DEFAULT_RETRY_SCHEDULE_MS); its length is the number of retries. */
  schedule?: readonly number[];
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** WEBHOOKS_ALLOW_PRIVATE. */
  allowPrivate?: boolean;
  /** BullMQ's job lock (default 30 s): after a crash, an attempt in flight is retried once its lock has expired. */
  lockDurationMs?: number;
  /** How often BullMQ looks for jobs whose lock expired (default 30 s). */
  stalledIntervalMs?: number;
  /** Deliveries in flight per worker (default 10). */
  concurrency?: number;
  logger?: Logger;
  /** Told how each attempt ended (metrics); `disabled`: the receiver answered 410 and the endpoint was disabled. */
  onOutcome?: (outcome: DeliveryOutcome) => void;
  /** Told of each job that could not be delivered (metrics); the job fails with undeliverableMessage(reason). */
  onUndeliverable?: (reason: UndeliverableReason) => void;
}

/** How a delivery attempt that was made ended. */
export const DELIVERY_OUTCOMES = ['succeeded', 'failed', 'disabled'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export interface DeliveryWorker {
  worker: Worker<DeliveryJob, void, typeof DELIVERY_JOB_NAME>;
  /** Lets the attempts in flight finish, then closes Redis and the HTTP client; safe to call more than once. */
  close(): Promise<void>;
}

/** Delivers the service's webhook jobs; retries follow `schedule` through BullMQ's custom backoff. */
export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE_MS;
  const allowPrivate = options.allowPrivate ?? false;
  // HTTP/1.1 as before undici 8, which would otherwise speak HTTP/2 to an endpoint that offers it:
  // deliveries keep the one protocol the guard and the timeouts were built and tested with.
  const dispatcher = new Agent(allowPrivate ? { allowH2: false } : { allowH2: false, connect: { lookup: publicGuard.lookup } });
  const attemptOptions: AttemptOptions = { sql: options.sql, dispatcher, timeoutMs: options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS, allowPrivate };

  const deliver = async (job: Job<DeliveryJob, void, typeof DELIVERY_JOB_NAME>): Promise<void> => {
    // Never completed without a word: a job that cannot be delivered fails (kept, with its reason), is logged and counted.
    const undeliverable = (reason: UndeliverableReason, context: object, detail?: string): never => {
      options.logger?.warn({ job_id: job.id, queue: options.queueName, reason, ...context }, 'webhook delivery cannot be made');
      options.onUndeliverable?.(reason);
      throw new UnrecoverableError(detail ? `${undeliverableMessage(reason)}: ${detail}` : undeliverableMessage(reason));
    };
    const parsed = DeliveryJob.safeParse(job.data);
    if (!parsed.success) return undeliverable('invalid_job', {}, parsed.error.message.slice(0, MAX_ERROR_LENGTH));
    const attempt = (parsed.data.attempts_made ?? 0) + job.attemptsMade + 1;
    const outcome = await attemptDelivery(parsed.data, attempt, attemptOptions);
    const about = { event_id: parsed.data.event.id, endpoint_id: parsed.data.endpoint_id, workspace_id: parsed.data.event.workspace_id, attempt };
    if (outcome.status === 'undeliverable') return undeliverable(outcome.reason, about);
    options.logger?.info({ ...about, ...outcome }, 'webhook delivery attempt');
    options.onOutcome?.(outcome.status === 'succeeded' ? 'succeeded' : outcome.gone ? 'disabled' : 'failed');
    if (outcome.status !== 'failed') return;
    if (outcome.gone) throw new UnrecoverableError('receiver answered 410 Gone; endpoint disabled');
    // Retried after schedule[attempt - 1] (retryDelay); the backoff strategy stops after the last step.
    throw new Error(outcome.error);
  };

  const worker = new Worker<DeliveryJob, void, typeof DELIVERY_JOB_NAME>(
    options.queueName,
    // Each attempt is a trace of its own that links to the change's: attempts go on for hours, and a
    // child span that late would stretch the change's trace over them.
    (job: Job<DeliveryJob, void, typeof DELIVERY_JOB_NAME>) =>
      inConsumerSpan(
        '@platform/webhooks',
        'webhook delivery',
        {
          links: [(job.data as { traceparent?: unknown } | null)?.traceparent],
          attributes: {
            'messaging.system': 'bullmq',
            'messaging.destination.name': options.queueName,
            'messaging.message.id': job.id ?? '',
            'platform.attempt': priorAttempts(job.data) + job.attemptsMade + 1,
          },
        },
        () => deliver(job),
      ),
    {
      connection: options.connection,
      prefix: queueKeyPrefix(options.prefix, options.queueName),
      concurrency: options.concurrency ?? 10,
      // BullMQ takes an explicit undefined as a value, not as "its default".
      lockDuration: options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS,
      stalledInterval: options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
      settings: { backoffStrategy: (attemptsMade: number, _type, _err, job) => retryDelay(schedule, attemptsMade, job?.data) },
    },
  );
  worker.on('error', (err) => options.logger?.error({ err }, 'delivery worker error'));

  // A delivery that ended for good leaves its workspace's pending ones (deliveries.fairness.ts); a
  // failed attempt with a retry to come stays, and its job keeps its priority. The events come once
  // BullMQ has moved the job: a process that dies in between leaves an entry, which a later add of
  // the workspace heals (the job is in the completed or failed set).
  const forgetting = new Set<Promise<void>>();
  const forget = (job: Job<DeliveryJob, void, typeof DELIVERY_JOB_NAME>) => {
    const done = forgetPending(worker, workspaceOf(job.data), job.id!).catch((err: unknown) =>
      options.logger?.warn({ err, job_id: job.id, queue: options.queueName }, 'ended delivery still counts as pending; a later add heals it'),
    );
    forgetting.add(done);
    void done.then(() => forgetting.delete(done));
  };
  worker.on('completed', forget);
  // finishedOn is set when this failure ended the job: the schedule's last step, 410 Gone, undeliverable.
  worker.on('failed', (job) => {
    if (job?.finishedOn) forget(job);
  });

  let closing: Promise<void> | undefined;
  return {
    worker,
    close() {
      closing ??= (async () => {
        await worker.close();
        await Promise.all(forgetting);
        await dispatcher.close();
      })();
      return closing;
    },
  };
}
