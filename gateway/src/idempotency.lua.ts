/**
 * Idempotency records (contract section 7), one Redis hash per scope:
 * `state` (running | done), `body_hash`, `claim` (the token of the request that claimed it),
 * and once done `status`, `headers` (JSON) and `body` (raw bytes).
 * Each script is one atomic call, so two instances can never both run a request.
 */

/**
 * Claims the scope for one request, or reports what holds it.
 * KEYS[1]: the record; ARGV[1]: body hash; ARGV[2]: claim token; ARGV[3]: claim TTL in ms.
 * Returns { 'claimed' } | { 'mismatch' } | { 'running' } | { 'done', status, headers, body }.
 * A different body wins over a running one: that mistake will not go away on retry.
 */
export const IDEMPOTENCY_CLAIM_LUA = `
local key = KEYS[1]
local state = redis.call('HGET', key, 'state')
if not state then
  redis.call('HSET', key, 'state', 'running', 'body_hash', ARGV[1], 'claim', ARGV[2])
  redis.call('PEXPIRE', key, ARGV[3])
  return { 'claimed' }
end
if redis.call('HGET', key, 'body_hash') ~= ARGV[1] then
  return { 'mismatch' }
end
if state ~= 'done' then
  return { 'running' }
end
local stored = redis.call('HMGET', key, 'status', 'headers', 'body')
return { 'done', stored[1], stored[2], stored[3] }
`;

/**
 * Stores the finished answer under the request's own claim. If that claim expired and nobody
 * claimed the scope since, the answer is still the only one there is, so it is stored too.
 * KEYS[1]: the record; ARGV[1]: claim token; ARGV[2]: body hash; ARGV[3]: record TTL in ms;
 * ARGV[4]: status; ARGV[5]: headers (JSON); ARGV[6]: body. Returns 1 when stored, else 0.
 */
export const IDEMPOTENCY_COMPLETE_LUA = `
local key = KEYS[1]
local owner = redis.call('HGET', key, 'claim')
if owner and owner ~= ARGV[1] then
  return 0
end
if owner and redis.call('HGET', key, 'state') ~= 'running' then
  return 0
end
redis.call('HSET', key, 'state', 'done', 'body_hash', ARGV[2], 'claim', ARGV[1], 'status', ARGV[4], 'headers', ARGV[5], 'body', ARGV[6])
redis.call('PEXPIRE', key, ARGV[3])
return 1
`;

/**
 * Frees the scope after an answer that is not stored (5xx, upstream down, client gone before
 * any answer), so a retry runs again. Only the request's own running claim is removed.
 * KEYS[1]: the record; ARGV[1]: claim token. Returns 1 when released, else 0.
 */
export const IDEMPOTENCY_RELEASE_LUA = `
local key = KEYS[1]
local fields = redis.call('HMGET', key, 'state', 'claim')
if fields[1] == 'running' and fields[2] == ARGV[1] then
  redis.call('DEL', key)
  return 1
end
return 0
`;
