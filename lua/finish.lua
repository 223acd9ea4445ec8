-- finish(job, slot, token): ends the current attempt as finished or failed, with its result.
-- ARGV: 1 slot, 2 token, 3 status (finished|failed), 4 result JSON text (validated by the client)
-- Reply: {outcome, attempt, lease_end, runner, status, server_now}
--   outcome ok, or lost when the run is gone, over, or held by another token (nothing is written).
local err = check_key_types(5)
if err then return err end

local slot, token, status, result_json = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = server_now_ms()
local run = read_run(slot)
err = validate_run(slot, run)
if err then return err end

local function reply(outcome)
  return {outcome, tostring(run.attempt or ''), tostring(run.lease_end or ''), run.runner or '', run.status or '', tostring(now)}
end

if not run.status or run.token ~= token or run.status ~= 'running' then
  return reply('lost')
end

record_attempt(slot, run, status, now, result_json)
redis.call('HSET', KEYS[1], field(slot, 'status'), status, field(slot, 'finished_at'), now)
redis.call('SREM', KEYS[2], slot)
run.status = status
return reply('ok')
