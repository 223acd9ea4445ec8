-- finish(job, slot, token), store format 2: ends the current attempt as finished or failed.
-- KEYS: 1-7 as in lua/v2/lib.lua
-- ARGV: 1 slot, 2 token, 3 status (finished|failed), 4 result JSON text (validated by the client)
-- Reply: {outcome, attempt, lease_end, runner, status, server_now}
--   outcome ok, or lost when the run is gone, over, or held by another token (nothing is written).
local slot, token, status, result_json = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = server_now_ms()
local run, reply = held_run(slot, token, now)
if not run then return reply end

local err = record_attempt(slot, run, status, now, result_json)
if err then return err end
redis.call('HDEL', KEYS[1], slot)
return {'ok', int(run.attempt), int(run.lease_end), run.runner, status, int(now)}
