-- pause(job): `anarchon pause`. Replaces the job's pause with one from the server's time now, and
-- records it in the job's events, in one step (docs/store-format.md, "Pause fields", "Events").
-- KEYS: 1 the job's `:job` hash, 2 its events stream (one hash slot: `{<prefix><job>}`)
-- ARGV: 1 by, 2 reason ('' none), 3 until ms ('' none), 4 for ms ('' none; with neither: until
--       resumed), 5 how many events the stream keeps
-- Reply: {'paused' | 'past' (the end given is not after now: nothing written), now, the events'
--         error (false: recorded), then the pause this replaced, as PAUSE_FIELDS (false: absent)}
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end
local before, err = read_pause(KEYS[1])
if not before then return err end
local now = now_ms()
local by, reason = ARGV[1], ARGV[2]
local until_ms = tonumber(ARGV[3])
if not until_ms and tonumber(ARGV[4]) then until_ms = now + tonumber(ARGV[4]) end
local reply = {'past', string.format('%d', now), false}
for i = 1, #PAUSE_FIELDS do reply[#reply + 1] = before[i] end
if until_ms and until_ms <= now then return reply end
redis.call('HDEL', KEYS[1], unpack(PAUSE_FIELDS))
local set = {KEYS[1], 'paused_at', string.format('%d', now), 'paused_by', by}
if until_ms then
  set[#set + 1] = 'paused_until'
  set[#set + 1] = string.format('%d', until_ms)
end
if reason ~= '' then
  set[#set + 1] = 'paused_reason'
  set[#set + 1] = reason
end
redis.call('HSET', unpack(set))
local detail = 'until resumed'
if until_ms then detail = 'until ' .. rfc3339(until_ms) end
reply[1] = 'paused'
reply[3] = audit(KEYS[2], ARGV[5], 'pause', by, reason, detail, until_ms)
return reply
