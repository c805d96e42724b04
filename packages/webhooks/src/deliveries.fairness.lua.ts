/**
 * The pending deliveries of one workspace in one delivery queue, and the rank of each job added
 * (deliveries.fairness.ts). One atomic call per workspace, on keys of the queue's one hash slot.
 * KEYS[1]: the queue's completed set; KEYS[2]: its failed set; KEYS[3]: the workspace's pending set
 * (job ids scored by when they were added, ms of Redis TIME).
 * ARGV[1]: the prefix of the queue's job keys (`<qualified name>:`); ARGV[2]: the horizon (ms): an
 * entry older than this stops counting, and the set expires this long after its last add; ARGV[3]:
 * the grace (ms) an entry whose job is not in the queue keeps (its add is on its way); ARGV[4]: how
 * many of the oldest entries are checked against the queue; ARGV[5..]: the job ids, in add order.
 *
 * Healing first: entries past the horizon go, then each of the oldest few goes if its job ended (in
 * the completed or failed set: the worker that ended it died before removing it) or has not been in
 * the queue for the grace (its add failed, or the job was removed).
 * Then each job: already pending (the same id added again: a relay's re-enqueue, a requeue) keeps
 * its entry and its place; a job the queue holds without an entry (finished: BullMQ will ignore the
 * add) gets no entry; any other job is added at the end. Returns each job's rank: its place among
 * the workspace's pending deliveries, 1 for the first.
 */
export const PENDING_RANK_LUA = `
local rcall = redis.call
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local completed, failed, pending = KEYS[1], KEYS[2], KEYS[3]
local jobKeys = ARGV[1]
local horizon = tonumber(ARGV[2])
local grace = tonumber(ARGV[3])
local checked = tonumber(ARGV[4])

rcall('ZREMRANGEBYSCORE', pending, '-inf', now - horizon)
local oldest = rcall('ZRANGE', pending, 0, checked - 1, 'WITHSCORES')
for i = 1, #oldest, 2 do
  local id = oldest[i]
  local ended
  if rcall('EXISTS', jobKeys .. id) == 0 then
    ended = tonumber(oldest[i + 1]) < now - grace
  else
    ended = rcall('ZSCORE', completed, id) or rcall('ZSCORE', failed, id)
  end
  if ended then rcall('ZREM', pending, id) end
end

local ranks = {}
for i = 5, #ARGV do
  local id = ARGV[i]
  local rank = rcall('ZRANK', pending, id)
  if rank then
    ranks[#ranks + 1] = rank + 1
  elseif rcall('EXISTS', jobKeys .. id) == 1 then
    ranks[#ranks + 1] = rcall('ZCARD', pending) + 1
  else
    rcall('ZADD', pending, now, id)
    ranks[#ranks + 1] = rcall('ZCARD', pending)
  end
end
-- Every score is at most now: a set kept one horizon past its last add outlives all its entries.
rcall('PEXPIRE', pending, horizon)
return ranks
`;

/** KEYS[1]: a workspace's pending set; ARGV[1]: the job id of a delivery that ended. Returns 1 if it was there. */
export const FORGET_PENDING_LUA = `return redis.call('ZREM', KEYS[1], ARGV[1])`;
