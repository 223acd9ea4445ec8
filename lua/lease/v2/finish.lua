-- finish(job, slot, token), store format 2: ends the current attempt as finished or failed.
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- ARGV: 1 slot, 2 token, 3 status (finished|failed), 4 result JSON text (validated by the client),
--       5 '1' when the command ended by itself, before its holder heard of a release (optional),
--       6-9 a failed command's retries (optional; lua/lease/retry.lua): how many the slot may be
--       given, the first delay (ms), the backoff factor, the longest delay (ms)
-- Reply: {outcome, attempt, lease_end, runner, status, server_now[, '', '', released_by, reason]}
--   outcome ok (status: what was recorded), or lost when the run is gone, over, or held by another
--   token (nothing is written). A finish sent again by the same token after its first was applied
--   (its reply lost or late) is answered ok again: finish is idempotent per token, as claim is.
--   A run an operator released (lua/lease/released.lua) and its holder stopped is recorded with the
--   release's status, and its result holds the release's and, under "command", this one. A command
--   that ended by itself before it heard of the release (ARGV 5) is recorded as it ended.
--   outcome retry (status failed): the command failed with retries left; the attempt is recorded
--   failed, the run stays in :live, its lease_end (the reply's) is when the retry is due, and the
--   reply's eleventh element is which retry it is. Sent again, it answers the same.
local slot, token, status, result_json = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = server_now_ms()
local run, reply = held_run(slot, token, now)
if not run then
  if type(reply) == 'table' and reply[1] == 'lost' and reply[5] ~= 'running' and reply[5] ~= '' then
    local recorded = own_result(KEYS[2], slot, token, result_json)
    if recorded then return {'ok', reply[2], '', reply[4], recorded, int(now)} end
  end
  return reply
end

local function retry_reply(at, nth)
  return {'retry', int(run.attempt), int(at), run.runner, 'failed', int(now), '', '', '', '', int(nth)}
end

-- This attempt ended for a retry already (its finish sent again, as it was: the reply was lost).
-- Only a finish that asks for retries can have given one: the others read nothing more.
local budget = tonumber(ARGV[6] or '') or 0
local pending = budget > 0 and pending_retry(KEYS[3], slot, run.attempt)
if pending then return retry_reply(tonumber(pending.at), tonumber(pending.given)) end

local mark, err = release_mark(KEYS[3], slot)
if err then return err end

-- A failed command with retries left: the attempt is recorded, the run waits for its retry.
if status == 'failed' and budget > 0 and not mark then
  local given = retries_given(KEYS[3], slot)
  if given < budget then
    local at = now + retry_delay(given, tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]))
    err = record_attempt(slot, run, 'failed', now, retry_result(result_json, at, given + 1))
    if err then return err end
    run.lease_end = at
    redis.call('HSET', KEYS[1], slot, encode_live(run))
    mark_retry(KEYS[3], slot, run.attempt, at, given + 1)
    return retry_reply(at, given + 1)
  end
end

local released_by, reason = '', ''
if mark and ARGV[5] ~= '1' then
  status, result_json = mark.status, released_result(mark, result_json)
  released_by, reason = release_words(mark)
end
err = end_live_run(slot, run, status, now, result_json)
if err then return err end
if mark then forget_release(KEYS[3], slot) end
forget_retry(KEYS[3], slot, run.attempt)
return {'ok', int(run.attempt), int(run.lease_end), run.runner, status, int(now), '', '', released_by,
  reason}
