/**
 * Idempotency records (contract section 7), one Redis hash per scope:
 * `state` (running | done), `body_hash`, `claim` (the token of the request that claimed it),
 * and once done `status`, `headers` (JSON) and `body` (raw bytes).
 * Each script is one atomic call, so two instances can never both run a request.
 *
 * Beside them, each workspace's byte count (contract section 20), in three keys:
 * `answers` (sorted set: a stored answer's scope id -> when its record expires, ms of Redis TIME),
 * `claims` (sorted set: a running claim's token -> when the claim expires) and `sizes` (hash:
 * `a:<scope id>` and `c:<token>` -> bytes, `stored` and `reserved` -> their sums). Every script
 * gets its keys (record, answers, claims, sizes), which share the workspace's hash tag, so a
 * script touches one Cluster slot. Entries past their expiry are dropped by whichever script
 * comes next (at most TRIM_BATCH of each kind a call, so one call stays short), so the count
 * falls as records expire without a sweeper; the three keys expire together after their last entry.
 */

/** Expired entries dropped per call and kind: bounds a script's time after a workspace's long pause. */
const TRIM_BATCH = 1000;

/** The ledger's functions over `answers`, `claims` and `sizes`, which each script names first. */
const LEDGER = `
local function now_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- Forgets one entry and its bytes. A sum of 0 is removed, so a workspace with nothing left has no
-- keys left; a sum never goes below 0 (only an evicted key could make it).
local function drop(zset, kind, total, member)
  local field = kind .. member
  local size = redis.call('HGET', sizes, field)
  if size then
    redis.call('HDEL', sizes, field)
    if redis.call('HINCRBY', sizes, total, -tonumber(size)) <= 0 then redis.call('HDEL', sizes, total) end
  end
  redis.call('ZREM', zset, member)
end

local function trim(now)
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', answers, '-inf', now, 'LIMIT', 0, ${TRIM_BATCH})) do
    drop(answers, 'a:', 'stored', member)
  end
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', claims, '-inf', now, 'LIMIT', 0, ${TRIM_BATCH})) do
    drop(claims, 'c:', 'reserved', member)
  end
end

-- The three keys expire together, once their last entry has: a sorted set gone before the sizes would
-- leave its entries' bytes counted for good.
local function keep(ttl)
  local longest = math.max(ttl, redis.call('PTTL', sizes))
  for _, key in ipairs({ answers, claims, sizes }) do
    if redis.call('PTTL', key) < longest then redis.call('PEXPIRE', key, longest) end
  end
end

local function sum(total)
  return tonumber(redis.call('HGET', sizes, total) or '0')
end
`;

/**
 * Claims the scope for one request, or reports what holds it. A new key is admitted only while
 * the workspace's stored bytes plus the reservations of its running claims stay under the limit;
 * it then reserves the most an answer may store, until its answer is stored or its claim ends.
 * KEYS: record, answers, claims, sizes; ARGV[1]: body hash; ARGV[2]: claim token; ARGV[3]: claim
 * TTL in ms; ARGV[4]: the workspace's limit in bytes; ARGV[5]: bytes reserved; ARGV[6]: record TTL
 * in ms (the wait when nothing stored will expire to make room).
 * Returns { 'claimed' } | { 'mismatch' } | { 'running' } | { 'done', status, headers, body }
 * | { 'quota', seconds until the oldest stored answer expires (>= 1) }.
 * A different body wins over a running one: that mistake will not go away on retry.
 */
export const IDEMPOTENCY_CLAIM_LUA = `
local answers, claims, sizes = KEYS[2], KEYS[3], KEYS[4]
${LEDGER}
local key = KEYS[1]
local state = redis.call('HGET', key, 'state')
if state then
  if redis.call('HGET', key, 'body_hash') ~= ARGV[1] then
    return { 'mismatch' }
  end
  if state ~= 'done' then
    return { 'running' }
  end
  local stored = redis.call('HMGET', key, 'status', 'headers', 'body')
  return { 'done', stored[1], stored[2], stored[3] }
end
local now = now_ms()
trim(now)
local limit, reserve, claim_ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[3])
local stored = sum('stored')
if stored >= limit then
  local oldest = redis.call('ZRANGE', answers, 0, 0, 'WITHSCORES')
  local wait = tonumber(ARGV[6])
  if oldest[2] then wait = tonumber(oldest[2]) - now end
  return { 'quota', tostring(math.max(1, math.ceil(wait / 1000))) }
end
-- Under the limit, but running claims may fill it: they end within their TTL, mostly far sooner.
if stored + sum('reserved') >= limit then
  return { 'quota', '1' }
end
redis.call('HSET', key, 'state', 'running', 'body_hash', ARGV[1], 'claim', ARGV[2])
redis.call('PEXPIRE', key, claim_ttl)
redis.call('ZADD', claims, now + claim_ttl, ARGV[2])
redis.call('HSET', sizes, 'c:' .. ARGV[2], reserve)
redis.call('HINCRBY', sizes, 'reserved', reserve)
keep(claim_ttl)
return { 'claimed' }
`;

/**
 * Stores the finished answer under the request's own claim. If that claim expired and nobody
 * claimed the scope since, the answer is still the only one there is, so it is stored too.
 * Either way the claim's reservation ends; a stored answer counts its status, headers and body
 * bytes until its record expires.
 * KEYS: record, answers, claims, sizes; ARGV[1]: claim token; ARGV[2]: body hash; ARGV[3]: record
 * TTL in ms; ARGV[4]: status; ARGV[5]: headers (JSON); ARGV[6]: body; ARGV[7]: the scope's id.
 * Returns 1 when stored, else 0.
 */
export const IDEMPOTENCY_COMPLETE_LUA = `
local answers, claims, sizes = KEYS[2], KEYS[3], KEYS[4]
${LEDGER}
local key = KEYS[1]
drop(claims, 'c:', 'reserved', ARGV[1])
local owner = redis.call('HGET', key, 'claim')
if owner and owner ~= ARGV[1] then
  return 0
end
if owner and redis.call('HGET', key, 'state') ~= 'running' then
  return 0
end
local now = now_ms()
trim(now)
local ttl = tonumber(ARGV[3])
redis.call('HSET', key, 'state', 'done', 'body_hash', ARGV[2], 'claim', ARGV[1], 'status', ARGV[4], 'headers', ARGV[5], 'body', ARGV[6])
redis.call('PEXPIRE', key, ttl)
-- An earlier answer of this scope whose record expired may not be trimmed yet: it counts no more.
drop(answers, 'a:', 'stored', ARGV[7])
local size = #ARGV[4] + #ARGV[5] + #ARGV[6]
redis.call('ZADD', answers, now + ttl, ARGV[7])
redis.call('HSET', sizes, 'a:' .. ARGV[7], size)
redis.call('HINCRBY', sizes, 'stored', size)
keep(ttl)
return 1
`;

/**
 * Frees the scope after an answer that is not stored (5xx, upstream down, client gone before
 * any answer), so a retry runs again, and ends the claim's reservation. Only the request's own
 * running claim is removed.
 * KEYS: record, answers, claims, sizes; ARGV[1]: claim token. Returns 1 when released, else 0.
 */
export const IDEMPOTENCY_RELEASE_LUA = `
local answers, claims, sizes = KEYS[2], KEYS[3], KEYS[4]
${LEDGER}
local key = KEYS[1]
drop(claims, 'c:', 'reserved', ARGV[1])
local fields = redis.call('HMGET', key, 'state', 'claim')
if fields[1] == 'running' and fields[2] == ARGV[1] then
  redis.call('DEL', key)
  return 1
end
return 0
`;

/**
 * The workspace's stored bytes, after dropping what expired.
 * KEYS: answers, claims, sizes. Returns { stored bytes, 1 when expired entries remain (call again) else 0 }.
 */
export const IDEMPOTENCY_USAGE_LUA = `
local answers, claims, sizes = KEYS[1], KEYS[2], KEYS[3]
${LEDGER}
local now = now_ms()
trim(now)
local more = 0
if #redis.call('ZRANGEBYSCORE', answers, '-inf', now, 'LIMIT', 0, 1) > 0 then more = 1 end
return { sum('stored'), more }
`;
