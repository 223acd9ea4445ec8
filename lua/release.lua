-- release(job, slot), store format 1: an operator ends a run in progress without its token (see
-- lua/v2/release.lua, which is the same for format 2).
-- KEYS: 1-5 as in lib.lua
-- ARGV: 1 slot, 2 expected attempt ('' for any), 3 status (interrupted|failed),
--       4 result JSON text (validated by the client)
-- Reply: {outcome, attempt, runner, token, server_now}: released | none | changed.
local err = check_key_types(5)
if err then return err end
local slot, expected, status, result_json = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = server_now_ms()
local run = read_run(slot)
err = validate_run(slot, run)
if err then return err end
if run.status ~= 'running' then return {'none', '', '', '', tostring(now)} end
if expected ~= '' and run.attempt ~= expected then
  return {'changed', run.attempt, run.runner or '', run.token, tostring(now)}
end
record_attempt(slot, run, status, now, result_json)
redis.call('HSET', KEYS[1], field(slot, 'status'), status, field(slot, 'finished_at'), now)
redis.call('SREM', KEYS[2], slot)
return {'released', run.attempt, run.runner or '', run.token, tostring(now)}
