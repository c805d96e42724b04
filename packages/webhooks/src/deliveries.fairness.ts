import type { RedisClient } from 'bullmq';
import { FORGET_PENDING_LUA, PENDING_RANK_LUA } from './deliveries.fairness.lua';

/**
 * Fair delivery (docs/decisions/0012-webhooks.md, "Fair delivery"). The deliveries of every
 * workspace share their service's queue; each job carries a BullMQ priority that is its rank among
 * its workspace's pending deliveries in that queue (1 for a workspace's first, k for its k-th).
 * BullMQ serves lower numbers first, so the queue serves workspaces round-robin: every workspace's
 * first pending delivery, then every one's second, ...; a workspace that just arrived is served
 * next, whatever another's backlog. As the pipelines run queue does (runs.admission.ts).
 *
 * The pending deliveries of a workspace are a sorted set under the queue's own key prefix
 * (`<QUEUE_PREFIX>:{<queue>}:<queue>:fair:<workspace id>`, the queue's hash slot), added to when a
 * job is added (deliveries.queue.ts, every producer) and removed from when it ends for good
 * (deliveries.worker.ts). A retry stays pending and keeps its priority.
 */

/** BullMQ's highest priority number (2^21 - 1): a rank above it is served with the last. */
export const MAX_PRIORITY = 2 ** 21 - 1;

/**
 * The BullMQ priority of a delivery ranked `rank` among its workspace's pending ones. Never 0:
 * BullMQ serves jobs without a priority before every prioritized one.
 */
export function deliveryPriority(rank: number): number {
  return Math.min(MAX_PRIORITY, Math.max(1, Math.floor(rank)));
}

/**
 * Waiting for a free worker slot, beyond the attempts and the schedule's delays: only a backlog of
 * the whole queue keeps a delivery pending longer, and an entry that stops counting early only lets
 * its workspace's later deliveries rank a place ahead (its job is still delivered).
 */
const QUEUE_WAIT_ALLOWANCE_MS = 60 * 60 * 1000;

/**
 * How long a delivery can stay pending: every attempt (the first and one per step of `schedule`)
 * up to `timeoutMs`, the schedule's delays, and an hour of waiting. An entry older than this belongs
 * to a job that ended without being removed (its worker died) and stops counting; the default
 * schedule gives about 29 h.
 */
export function pendingHorizonMs(schedule: readonly number[], timeoutMs: number): number {
  return schedule.reduce((sum, delay) => sum + delay, 0) + (schedule.length + 1) * timeoutMs + QUEUE_WAIT_ALLOWANCE_MS;
}

/**
 * An entry whose job is not in the queue keeps counting this long: a producer records its jobs
 * just before BullMQ adds them. After that its add failed (the relay's transaction rolled back and
 * the same id comes again) or the job was removed, and the entry goes.
 */
const ADD_GRACE_MS = 60_000;
/** The oldest entries of a workspace checked against the queue at each add: a few lookups, whatever its backlog. */
const CHECKED_PER_ADD = 5;

/** Where a job's data names no workspace (a malformed job): such jobs share one pending set. */
const NO_WORKSPACE = '-';

/** The workspace a delivery job's data names, read before the payload is parsed. */
export function workspaceOf(data: unknown): string {
  const id = (data as { event?: { workspace_id?: unknown } } | null | undefined)?.event?.workspace_id;
  return typeof id === 'string' && id.length > 0 ? id : NO_WORKSPACE;
}

/**
 * The pending set of `workspaceId` in the queue whose BullMQ qualified name is `qualifiedName`
 * (`<queue key prefix>:<queue>`): under the queue's hash tag, so in the slot of its own keys, and
 * under the deployment's QUEUE_PREFIX. BullMQ job ids cannot hold `:`, so no job key is named so.
 */
export function pendingKey(qualifiedName: string, workspaceId: string): string {
  return `${qualifiedName}:fair:${workspaceId}`;
}

/** The jobs of each workspace, in order, with their places in `jobs`. */
export function byWorkspace<T>(jobs: readonly T[], workspace: (job: T) => string): Map<string, { index: number; job: T }[]> {
  const groups = new Map<string, { index: number; job: T }[]>();
  jobs.forEach((job, index) => {
    const key = workspace(job);
    const group = groups.get(key) ?? [];
    group.push({ index, job });
    groups.set(key, group);
  });
  return groups;
}

/** What the fairness needs of a BullMQ queue or worker: its key names, and its Redis client. */
export interface FairQueueKeys {
  qualifiedName: string;
  toKey(type: string): string;
  getBackend(): { client: Promise<RedisClient> };
}

const RANK_COMMAND = 'webhooksPendingRank';
const FORGET_COMMAND = 'webhooksForgetPending';
const defined = new WeakSet<RedisClient>();

async function clientOf(queue: FairQueueKeys): Promise<RedisClient> {
  const client = await queue.getBackend().client;
  if (!defined.has(client)) {
    client.defineCommand(RANK_COMMAND, { numberOfKeys: 3, lua: PENDING_RANK_LUA });
    client.defineCommand(FORGET_COMMAND, { numberOfKeys: 1, lua: FORGET_PENDING_LUA });
    defined.add(client);
  }
  return client;
}

/**
 * Records the jobs (id and workspace) as pending in their workspaces' sets and returns each one's
 * BullMQ priority, in the order of `jobs`: one atomic call per workspace, so two producers adding
 * at once never give two jobs the same rank, and a job added again under its id counts once.
 */
export async function rankPending(queue: FairQueueKeys, jobs: readonly { jobId: string; workspaceId: string }[], horizonMs: number): Promise<number[]> {
  if (jobs.length === 0) return [];
  const client = await clientOf(queue);
  const priorities = new Array<number>(jobs.length);
  const groups = [...byWorkspace(jobs, (job) => job.workspaceId)];
  const answers = await Promise.all(
    groups.map(
      ([workspaceId, group]) =>
        client.runCommand(RANK_COMMAND, [
          queue.toKey('completed'),
          queue.toKey('failed'),
          pendingKey(queue.qualifiedName, workspaceId),
          // The prefix of the queue's job keys (`<qualified name>:<job id>`).
          queue.toKey(''),
          Math.ceil(horizonMs),
          ADD_GRACE_MS,
          CHECKED_PER_ADD,
          ...group.map(({ job }) => job.jobId),
        ]) as Promise<number[]>,
    ),
  );
  groups.forEach(([, group], g) => group.forEach(({ index }, i) => (priorities[index] = deliveryPriority(Number(answers[g]![i])))));
  return priorities;
}

/** Removes an ended delivery from its workspace's pending set. */
export async function forgetPending(queue: FairQueueKeys, workspaceId: string, jobId: string): Promise<void> {
  const client = await clientOf(queue);
  await client.runCommand(FORGET_COMMAND, [pendingKey(queue.qualifiedName, workspaceId), jobId]);
}
