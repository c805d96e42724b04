/**
 * Sliding-log rate limit, one atomic call on one key (contract sections 6 and 17).
 * KEYS[1]: sorted set of the accepted requests in the window, scored in µs of Redis TIME.
 * ARGV[1]: limit; ARGV[2]: window (µs); ARGV[3]: this request's member (unique per request), or ''
 * to decide nothing (only write what follows and count).
 * Optional, after a Redis outage: ARGV[4] = n, then n pairs (age µs, member) of requests this
 * instance accepted from memory, each scored now minus its age (how long before the call was
 * sent it was accepted, on the instance's clock: no clocks are compared) and added unless already
 * there (a timed-out call may have added the same member); then the members of requests it
 * refused whose call may still have run, removed.
 * A member already in the log is not added twice: a command resent after a reconnect counts once.
 * Returns { 1 if accepted else 0, count in the window after this call, reset (µs: when one more
 * request will be accepted), now (µs) }. A refused request is not recorded.
 */
export const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local member = ARGV[3]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
-- Every score is at most now, so a key kept one window past the last add outlives all its entries.
local added = false
if #ARGV > 3 then
  local accepted = tonumber(ARGV[4])
  for i = 5, 4 + 2 * accepted, 2 do
    local score = now - tonumber(ARGV[i])
    if score > now - window then
      redis.call('ZADD', key, 'NX', score, ARGV[i + 1])
      added = true
    end
  end
  for i = 5 + 2 * accepted, #ARGV do
    redis.call('ZREM', key, ARGV[i])
  end
end
local count = redis.call('ZCARD', key)
local allowed = 0
if member ~= '' and count < limit then
  count = count + redis.call('ZADD', key, 'NX', now, member)
  added = true
  allowed = 1
end
if added then
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
end
local reset = now
if count >= limit then
  local entry = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
  reset = tonumber(entry[2]) + window
end
return { allowed, count, reset, now }
`;
