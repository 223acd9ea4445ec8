-- finish(job, slot, token): ends the current attempt as finished or failed, with its result.
-- KEYS: 1-6 as in lib.lua
-- ARGV: 1 slot, 2 token, 3 status (finished|failed), 4 result JSON text (validated by the client),
--       5 '1' when the command ended by itself, before its holder heard of a release (optional),
--       6-9 a failed command's retries (optional; lua/lease/retry.lua): how many the slot may be
--       given, the first delay (ms), the backoff factor, the longest delay (ms)
-- Reply: {outcome, attempt, lease_end, runner, status, server_now[, '', '', released_by, reason]}
--   outcome ok (status: what was recorded), or lost when the run is gone, over, or held by another
--   token (nothing is written). A finish sent again by the same token after its first was applied
--   (its reply lost or late) is answered ok again: finish is idempotent per token, as claim is.
--   A run an operator released (lib.lua release_mark) and its holder stopped is recorded with the
--   release's status, and its result holds the release's and, under "command", this one. A command
--   that ended by itself before it heard of the release (ARGV 5) is recorded as it ended: the
--   release stopped nothing, and the mark goes.
--   outcome retry (status failed): the command failed with retries left; the attempt is recorded
--   failed, the run stays in progress, its lease_end (the reply's) is when the retry is due, and the
--   reply's eleventh element is which retry it is. Sent again, it answers the same.
-- :state is read first; :active, :results and :runs are checked as they are written (lib.lua
-- finish_run).
local err

local slot, token, status, result_json = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local run
run, err = read_valid_run(slot)
if not run then return err end

-- `now`: the attempt's end when this finish ended it (finish_run), else the server's time.
local function reply(outcome, recorded, now)
  return {outcome, tostring(run.attempt or ''), tostring(run.lease_end or ''), run.runner or '', recorded or run.status or '', tostring(now)}
end

if not run.status or run.token ~= token or run.status ~= 'running' then
  -- An ended run's state may have dropped its token (lib.lua, RUN_FIELDS): its members tell.
  if run.status and run.status ~= 'running' or run.token == token then
    local recorded = own_result(KEYS[5], slot, token, result_json)
    if recorded then return reply('ok', recorded, server_now_ms()) end
  end
  return reply('lost', nil, server_now_ms())
end

local function retry_reply(at, nth, now)
  return {'retry', tostring(run.attempt), string.format('%d', at), run.runner or '', 'failed', tostring(now),
    '', '', '', '', string.format('%d', nth)}
end

-- This attempt ended for a retry already (its finish sent again, as it was: the reply was lost).
-- Only a finish that asks for retries can have given one: the others read nothing more.
local budget = tonumber(ARGV[6] or '') or 0
local pending = budget > 0 and pending_retry(KEYS[6], slot, run.attempt)
if pending then return retry_reply(tonumber(pending.at), tonumber(pending.given), server_now_ms()) end

local mark, ended_at
mark, err = release_mark(KEYS[6], slot)
if err then return err end
if mark and ARGV[5] == '1' then
  ended_at, err = finish_run(slot, run, status, result_json)
  if not ended_at then return err end
  forget_release(KEYS[6], slot)
  forget_retry(KEYS[6], slot, run.attempt)
  return reply('ok', status, ended_at)
end
if mark then
  ended_at, err = finish_run(slot, run, mark.status, released_result(mark, result_json))
  if not ended_at then return err end
  forget_release(KEYS[6], slot)
  forget_retry(KEYS[6], slot, run.attempt)
  local by, why = release_words(mark)
  return {'ok', tostring(run.attempt), tostring(run.lease_end), run.runner or '', mark.status,
    ended_at, '', '', by, why}
end

-- A failed command with retries left: the attempt is recorded, the run waits for its retry.
if status == 'failed' and budget > 0 then
  local given = retries_given(KEYS[6], slot)
  if given < budget then
    local now = server_now_ms()
    local at = now + retry_delay(given, tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]))
    local id
    id, err = add_run_entry(slot, run, 'failed')
    if not id then return err end
    local added
    added, err = checked(5, 'ZADD', KEYS[5], slot,
      result_member(run, 'failed', id_ms(id), retry_result(result_json, at, given + 1)))
    if not added then
      redis.call('XDEL', KEYS[4], id)
      return err
    end
    redis.call('HSET', KEYS[1], field(slot, 'lease_end'), string.format('%d', at))
    mark_retry(KEYS[6], slot, run.attempt, at, given + 1)
    return retry_reply(at, given + 1, now)
  end
end

ended_at, err = finish_run(slot, run, status, result_json)
if not ended_at then return err end
forget_retry(KEYS[6], slot, run.attempt)
return reply('ok', status, ended_at)
