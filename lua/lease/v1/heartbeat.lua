-- heartbeat(job, slot, token): pushes the lease end forward, only for the current attempt's token.
-- KEYS: 1-6 as in lib.lua
-- ARGV: 1 slot, 2 token, 3 lease_ms, 4 'hand_over' (optional): the holder has stopped its command
--   (`anarchon cron` shutting down) and gives the run up: its lease ends now, so that a backup's
--   next claim records the attempt interrupted and takes the run over at once
-- Reply: {outcome, attempt, lease_end, runner, status, server_now[, '', '', released_by, reason]}
--   outcome ok; lost when the run is gone, finished, held by another token, or its attempt ended
--   for a retry (lua/lease/retry.lua); released when an
--   operator released it (lib.lua release_mark): the lease is not renewed, the holder must stop
--   its command and finish, and the reply says who released it and why.
-- A renewal passes at a full server (renew_in_place): a holder whose command has ended keeps the
-- run until its end can be recorded, never handing a completed run to a backup.
-- function flags: allow-oom
local err

local slot, token, lease_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = server_now_ms()
local run
run, err = read_valid_run(slot)
if not run then return err end

local function reply(outcome, end_ms)
  return {outcome, tostring(run.attempt or ''), tostring(end_ms or ''), run.runner or '', run.status or '', tostring(now)}
end

if not run.status or run.token ~= token or run.status ~= 'running' then
  return reply('lost', run.lease_end)
end
-- An attempt that ended for a retry (its finish recorded it) is held by nobody until the retry.
if pending_retry(KEYS[6], slot, run.attempt) then
  return reply('lost', run.lease_end)
end
local mark
mark, err = release_mark(KEYS[6], slot)
if err then return err end
if mark then
  local by, why = release_words(mark)
  return {'released', tostring(run.attempt), tostring(run.lease_end), run.runner or '', mark.status,
    tostring(now), '', '', by, why}
end
-- An expired lease that nobody took over is still ours: extending it steals from no one.
-- A heartbeat never moves the lease end backwards: a shorter --lease must not hand the run over.
local lease_end = now + lease_ms
local current = tonumber(run.lease_end)
if ARGV[4] == 'hand_over' then
  lease_end = now
  if current and current < now then lease_end = current end
  -- Said to the claim that records the attempt's end (handed_over.lua): a deploy, not a crash.
  mark_handed_over(KEYS[6], slot, run.attempt, run.runner, 'shutdown')
elseif current and current > lease_end then
  lease_end = current
end
renew_in_place(KEYS[1])
redis.call('HSET', KEYS[1], field(slot, 'lease_end'), lease_end)
return reply('ok', lease_end)
