-- release(job, slot), store format 2: an operator ends a run in progress without its token (a
-- stuck or hung holder). While the holder's lease lives, the run is only marked released
-- (lua/lease/released.lua): it stays held, so nothing else runs the job until the holder, told by its
-- next heartbeat, has stopped its command and recorded the attempt with `status`. A run whose lease
-- has expired (its holder gone), or any run with `force`, ends at once: its current attempt is
-- recorded with `status` and who released it and why.
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- ARGV: 1 slot, 2 expected attempt ('' for any), 3 status (interrupted|failed),
--       4 result JSON text (validated by the client), 5 force (1: end it now even under a live lease)
-- Reply: {outcome, attempt, runner, token, server_now, lease_end}; outcome is released (ended now),
--   releasing (marked; its holder still has a live lease), none (not in progress) or changed
--   (another attempt holds it now than the operator saw: nothing written).
local slot, expected, status, result_json, force = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5] == '1'
local now = server_now_ms()
local run, err = find_run_in_progress(slot)
if err then return err end
if not run then return {'none', '', '', '', int(now), ''} end
if expected ~= '' and int(run.attempt) ~= expected then
  return {'changed', int(run.attempt), run.runner, run.token, int(now), int(run.lease_end)}
end
-- A run waiting for a retry (lua/lease/retry.lua) has no holder: it ends now, the retry recorded
-- as not run, with the release's status and result.
if pending_retry(KEYS[3], slot, run.attempt) then
  err = end_live_run(slot, retry_not_run(run, now), status, now, result_json)
  if err then return err end
  forget_retry(KEYS[3], slot, 2)
  -- The token says which attempt ended: the retry, not run.
  return {'released', int(run.attempt), run.runner, 'retry-not-run', int(now), int(run.lease_end)}
end
local mark
mark, err = release_mark(KEYS[3], slot)
if err then return err end
if run.lease_end > now and not force then
  if not mark then
    redis.call('HSET', KEYS[3], release_field(slot), encode_release_mark(status, result_json))
  end
  return {'releasing', int(run.attempt), run.runner, run.token, int(now), int(run.lease_end)}
end
err = end_live_run(slot, run, status, now, result_json)
if err then return err end
if mark then forget_release(KEYS[3], slot) end
forget_retry(KEYS[3], slot, run.attempt)
return {'released', int(run.attempt), run.runner, run.token, int(now), int(run.lease_end)}
