-- heartbeat(job, slot, token), store format 2: pushes the lease end forward, only for the current
-- attempt's token.
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- ARGV: 1 slot, 2 token, 3 lease_ms (0: the lease the attempt was claimed with),
--       4 'hand_over' (optional): the holder has stopped its command (`anarchon cron` shutting
--       down) and gives the run up: its lease ends now, so that a backup's next claim records the
--       attempt interrupted and takes the run over at once instead of when the lease would end
-- Reply: {outcome, attempt, lease_end, runner, status, server_now[, '', '', released_by, reason]}
--   outcome ok; lost when the run is gone, over, held by another token, or its attempt ended for
--   a retry (lua/lease/retry.lua); released when an
--   operator released it (lua/lease/released.lua): the lease is not renewed, the holder must stop its
--   command and finish, and the reply says who released it and why.
-- A renewal passes at a full server (renew_in_place): a holder whose command has ended keeps the
-- run until its end can be recorded, never handing a completed run to a backup.
-- function flags: allow-oom
local slot, token, lease_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = server_now_ms()
local run, reply = held_run(slot, token, now)
if not run then return reply end
-- An attempt that ended for a retry (its finish recorded it) is held by nobody until the retry.
if pending_retry(KEYS[3], slot, run.attempt) then
  return {'lost', int(run.attempt), int(run.lease_end), run.runner, 'running', int(now)}
end
local mark, err = release_mark(KEYS[3], slot)
if err then return err end
if mark then
  local by, why = release_words(mark)
  return {'released', int(run.attempt), int(run.lease_end), run.runner, mark.status, int(now), '', '',
    by, why}
end
-- An expired lease that nobody took over is still ours: extending it steals from no one.
-- A heartbeat never moves the lease end backwards: a shorter --lease must not hand the run over.
if lease_ms <= 0 then lease_ms = run.lease_ms end
if ARGV[4] == 'hand_over' then
  run.lease_end = math.min(run.lease_end, now)
  -- Said to the claim that records the attempt's end (handed_over.lua): a deploy, not a crash.
  mark_handed_over(KEYS[3], slot, run.attempt, run.runner, 'shutdown')
else
  run.lease_end = math.max(run.lease_end, now + lease_ms)
end
renew_in_place(KEYS[1])
redis.call('HSET', KEYS[1], slot, encode_live(run))
return {'ok', int(run.attempt), int(run.lease_end), run.runner, 'running', int(now)}
