/**
 * Sliding-log rate limit with slots leased ahead, one atomic call (contract section 6).
 * KEYS[1]: sorted set of slots (accepted requests and slots leased to an instance), scored in µs
 *   of Redis TIME.
 * ARGV[1]: limit; ARGV[2]: window (µs); ARGV[3]: lease time (µs); ARGV[4]: slots wanted;
 * ARGV[5]: 1 when the first slot is used at once (a request waits on this call), else 0;
 * ARGV[6]: the lease's name (slot n is the member `<name>:<n>`);
 * then any number of give-backs, three arguments each: lease name, first and last slot number of
 *   slots that were leased but not used (removed, so they stop counting).
 * Returns { granted, count in window after this call, reset (µs: when one more slot can be
 * granted), now (µs) }. Nothing is recorded for slots that are not granted.
 *
 * A slot used at once is scored now. A slot leased ahead may be used up to the lease time later,
 * so it is scored at now + lease time: it then stays counted for at least a whole window after
 * its use, wherever in the lease time that falls, and no rolling window ever holds more than the
 * limit of used and leased slots together. Redis TIME (not the callers' clocks) orders every
 * instance's slots on one timeline.
 */
export const SLIDING_WINDOW_LUA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local lease_time = tonumber(ARGV[3])
local wanted = tonumber(ARGV[4])
local first_used_now = ARGV[5] == '1'
local lease = ARGV[6]
for i = 7, #ARGV, 3 do
  local members = {}
  for n = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]) do members[#members + 1] = ARGV[i] .. ':' .. n end
  if #members > 0 then redis.call('ZREM', key, unpack(members)) end
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local granted = math.max(0, math.min(wanted, limit - count))
if granted > 0 then
  local slots = {}
  for n = 0, granted - 1 do
    slots[#slots + 1] = (n == 0 and first_used_now) and now or now + lease_time
    slots[#slots + 1] = lease .. ':' .. n
  end
  redis.call('ZADD', key, unpack(slots))
  redis.call('PEXPIRE', key, math.ceil((window + lease_time) / 1000))
  count = count + granted
end
local reset = now
if count >= limit then
  local entry = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
  reset = tonumber(entry[2]) + window
end
return { granted, count, reset, now }
`;
