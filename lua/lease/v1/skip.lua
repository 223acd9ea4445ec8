-- skip(job, slot), store format 1: records a scheduled run that `run --catch-up` decided not to run
-- (--catch-up-policy latest, or more missed runs than --catch-up-max) as skipped, once, in a shape
-- every format 1 reader already knows: its state is a final `interrupted` (so every claim, the
-- seed's flowchart's too, answers done and runs nothing), with the fields earlier anarchon releases
-- check, and its :results member says what happened (status `skipped`, attempt 0, token
-- `skip:<slot>`, the reason), for history and health. No :runs entry: no attempt ran. Only a slot
-- that nobody claimed: a run in progress or ended is answered as it is, and a paused slot is left
-- alone (the pause skipped it already; it is not a missed run).
-- KEYS: 1-6 as in lib.lua
-- ARGV: 1 slot, 2 runner (the host that decided), 3 reason
-- Reply: {outcome, status, server_now}; outcome is skipped, running, done or paused.
local err = check_key_types(6)
if err then return err end
local slot, runner, reason = ARGV[1], ARGV[2], ARGV[3]
local now = server_now_ms()
local keep_ms, job_err, trimmed_to, pause = read_job_limits(0, now)
if not keep_ms then return job_err end
local run
run, err = read_valid_run(slot)
if not run then return err end
if run.status == 'running' then return {'running', 'running', tostring(now)} end
if run.status then return {'done', run.status, tostring(now)} end
if trimmed_to and tonumber(slot) <= trimmed_to then return {'done', 'trimmed', tostring(now)} end
if paused(tonumber(slot), now, pause[1], pause[2], pause[3]) then
  return {'paused', 'paused', tostring(now)}
end
redis.call('HSET', KEYS[1], field(slot, 'status'), 'interrupted', field(slot, 'attempt'), 1,
  field(slot, 'token'), 'skip:' .. slot, field(slot, 'lease_end'), now, field(slot, 'claimed_at'), now,
  field(slot, 'started_at'), now)
redis.call('ZADD', KEYS[3], slot, slot)
redis.call('ZADD', KEYS[5], slot, '{"attempt":0,"token":' ..
  cjson.encode('skip:' .. slot) .. ',"runner":' .. cjson.encode(runner) ..
  ',"status":"skipped","claimed_at":' .. now .. ',"ended_at":' .. now .. ',"result":' ..
  cjson.encode({reason = reason}) .. '}')
return {'skipped', 'skipped', tostring(now)}
