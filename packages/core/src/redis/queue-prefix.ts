import { z } from 'zod';

/**
 * QUEUE_PREFIX, the key prefix of one platform in Redis: every key of a deployment's queues is
 * `<prefix>:<queue>:...` and the gateway's are `<prefix>:gateway:...`, so two platforms on one
 * Redis with different prefixes never see each other's jobs, limits or records. Names (and the
 * `queue` label of queue_depth) stay the same in every deployment, and a platform's keys are one
 * pattern, `<prefix>:*` (a Redis ACL key pattern, one cleanup). `{name}` (a Redis Cluster hash tag)
 * is allowed; `:` is not, so no `<prefix>:` starts another's keys.
 */
export const QueuePrefix = z
  .string()
  .regex(/^(\{[A-Za-z0-9_.-]{1,62}\}|[A-Za-z0-9_.-]{1,64})$/, 'must be 1-64 characters of A-Z a-z 0-9 _ . - (or {name}, a Redis Cluster hash tag)');

/** QUEUE_PREFIX when unset: enough for one platform per Redis; a second one on the same Redis must set its own. */
export const DEFAULT_QUEUE_PREFIX = 'platform';
