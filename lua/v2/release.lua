-- release(job, slot), store format 2: an operator ends a run in progress without its token (a
-- stuck or hung holder): its current attempt is recorded with `status` and who released it and
-- why, and the run ends, so its lease no longer blocks anything. The holder's next heartbeat or
-- finish answers lost, and `anarchon run` stops its command then.
-- KEYS: 1-7 as in lua/v2/lib.lua
-- ARGV: 1 slot, 2 expected attempt ('' for any), 3 status (interrupted|failed),
--       4 result JSON text (validated by the client)
-- Reply: {outcome, attempt, runner, token, server_now}; outcome is released, none (not in
--   progress) or changed (another attempt holds it now than the operator saw: nothing written).
local slot, expected, status, result_json = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = server_now_ms()
local run, err = find_run_in_progress(slot)
if err then return err end
if not run then return {'none', '', '', '', int(now)} end
if expected ~= '' and int(run.attempt) ~= expected then
  return {'changed', int(run.attempt), run.runner, run.token, int(now)}
end
err = record_attempt(slot, run, status, now, result_json)
if err then return err end
redis.call('HDEL', KEYS[1], slot)
return {'released', int(run.attempt), run.runner, run.token, int(now)}
