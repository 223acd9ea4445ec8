-- overlap_buffer(job): `anarchon run --overlap buffer` keeps at most one slot of a job waiting for
-- an older run to end (docs/store-format.md, "Overlap policies"). The place is the field
-- `buffered` = "<slot>:<until>" of the job hash, which only anarchon reads: it decides whether a
-- host waits or records its slot skipped, never who runs a slot (the claim script decides that).
-- KEYS: 1 job hash ({<prefix><job>}:job)
-- ARGV: 1 hold | free, 2 slot (ms), 3 until (ms by the server's clock: the slot's --max-late),
--       4 hold_ms (optional): the place is held until min(until, now + hold_ms) and the waiting host
--       holds it again at every look (each second), so a waiter that dies frees it within
--       hold_ms instead of holding it, and skipping every later slot, until its --max-late.
-- Reply: {answer, slot}, strings.
--   hold: buffered (this slot has the place: it was free, lapsed, or this slot's already) |
--         full (another slot waits: its slot).
--   free: freed (this slot's place is given up) | kept (the place is another slot's or nobody's).
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end
local action, slot, until_ms = ARGV[1], ARGV[2], ARGV[3]
local held = redis.pcall('HGET', KEYS[1], 'buffered')
if type(held) == 'table' and held.err then
  return redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[1] .. ' another-type hash')
end
local held_slot, held_until = nil, nil
if held then
  held_slot, held_until = string.match(held, '^(%d+):(%d+)$')
  if not held_slot then
    return redis.error_reply('ANARCHON_CORRUPT ' .. KEYS[1] .. ' field buffered is not <slot>:<until>')
  end
end

if action == 'free' then
  if held_slot == slot then
    redis.call('HDEL', KEYS[1], 'buffered')
    return {'freed', slot}
  end
  return {'kept', held_slot or ''}
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if held_slot and held_slot ~= slot and tonumber(held_until) > now then
  return {'full', held_slot}
end
local hold_ms = tonumber(ARGV[4] or '')
if hold_ms and now + hold_ms < tonumber(until_ms) then until_ms = tostring(now + hold_ms) end
redis.call('HSET', KEYS[1], 'buffered', slot .. ':' .. until_ms)
return {'buffered', slot}
