-- release(job, slot), store format 1: an operator ends a run in progress without its token (see
-- lua/lease/v2/release.lua, which is the same for format 2).
-- KEYS: 1-6 as in lib.lua
-- ARGV: 1 slot, 2 expected attempt ('' for any), 3 status (interrupted|failed),
--       4 result JSON text (validated by the client), 5 force (1: end it now even under a live lease)
-- Reply: {outcome, attempt, runner, token, server_now, lease_end}: released (ended now) | releasing
--   (its holder still has a live lease: marked, lib.lua release_mark; it ends when the holder has
--   stopped its command, or when the lease expires) | none | changed.
local err = check_key_types(5)
if err then return err end
local slot, expected, status, result_json, force = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5] == '1'
local now = server_now_ms()
local run
run, err = read_valid_run(slot)
if not run then return err end
if run.status ~= 'running' then return {'none', '', '', '', tostring(now), ''} end
if expected ~= '' and run.attempt ~= expected then
  return {'changed', run.attempt, run.runner or '', run.token, tostring(now), run.lease_end}
end
-- A run waiting for a retry (lua/lease/retry.lua) has no holder: it ends now, the retry recorded
-- as not run, with the release's status and result.
if pending_retry(KEYS[6], slot, run.attempt) then
  end_run(slot, retry_not_run(run, now), status, now, result_json)
  forget_retry(KEYS[6], slot, 2)
  -- The token says which attempt ended: the retry, not run.
  return {'released', run.attempt, run.runner or '', 'retry-not-run', tostring(now), run.lease_end}
end
local mark
mark, err = release_mark(KEYS[6], slot)
if err then return err end
if tonumber(run.lease_end) > now and not force then
  if not mark then
    redis.call('HSET', KEYS[6], 'released:' .. slot, encode_release_mark(status, result_json))
  end
  return {'releasing', run.attempt, run.runner or '', run.token, tostring(now), run.lease_end}
end
end_run(slot, run, status, now, result_json)
if mark then forget_release(KEYS[6], slot) end
forget_retry(KEYS[6], slot, run.attempt)
return {'released', run.attempt, run.runner or '', run.token, tostring(now), run.lease_end}
