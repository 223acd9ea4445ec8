-- resume(job): `anarchon resume`. Ends the pause in force at the server's time now (the rule of
-- lua/lease/pause.lua) and records which pause it ended in the job's events, in one step; a job
-- not paused now is left alone and nothing is recorded (docs/store-format.md, "Pause fields").
-- KEYS: 1 the job's `:job` hash, 2 its events stream (one hash slot: `{<prefix><job>}`)
-- ARGV: 1 by, 2 reason ('' none), 3 how many events the stream keeps
-- Reply: {'resumed' | 'not_paused', now, the events' error (false: recorded), then the pause as
--         PAUSE_FIELDS (false: absent), resumed_at now when it ended it}
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end
local fields, err = read_pause(KEYS[1])
if not fields then return err end
local now = now_ms()
local reply = {'not_paused', string.format('%d', now), false}
for i = 1, #PAUSE_FIELDS do reply[#reply + 1] = fields[i] end
local paused_at = tonumber(fields[1])
if not paused(now, now, paused_at, tonumber(fields[2]), tonumber(fields[3])) then return reply end
redis.call('HSET', KEYS[1], 'resumed_at', string.format('%d', now))
reply[1] = 'resumed'
reply[6] = string.format('%d', now)
local by = fields[4] or 'someone'
reply[3] = audit(KEYS[2], ARGV[3], 'resume', ARGV[1], ARGV[2],
  'ended the pause ' .. by .. ' began at ' .. rfc3339(paused_at))
return reply
