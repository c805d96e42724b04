/**
 * Sliding-log rate limit, one atomic call (contract section 6).
 * KEYS[1]: sorted set of the accepted requests in the window, scored in µs of Redis TIME.
 * ARGV[1]: limit; ARGV[2]: window (µs); ARGV[3]: this request's member (unique per request).
 * Returns { 1 if accepted else 0, count in the window after this call, reset (µs: when one more
 * request will be accepted), now (µs) }. A refused request is not recorded.
 */
export const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  count = count + 1
  allowed = 1
end
local reset = now
if count >= limit then
  local entry = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
  reset = tonumber(entry[2]) + window
end
return { allowed, count, reset, now }
`;
