-- What `anarchon pause` and `anarchon resume` share (bundled into each: lua/store/pause.lua and
-- lua/store/resume.lua). Both read the job's pause (lua/lease/pause.lua's fields), decide, write it
-- and record the action in the job's events in one step, so the audit is as true as the state.

-- The `:job` fields of a pause, in the order the replies give them (src/store/pause.rs FIELDS).
local PAUSE_FIELDS = {'paused_at', 'paused_until', 'resumed_at', 'paused_by', 'paused_reason'}

-- The server's time in ms.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The job's pause fields, as stored (false when absent); nil and an error reply when the key is
-- not a hash.
local function read_pause(key)
  local stored = redis.pcall('HMGET', key, unpack(PAUSE_FIELDS))
  if type(stored) == 'table' and stored.err then
    return nil, redis.error_reply('ANARCHON_WRONGTYPE ' .. key .. ' another type hash')
  end
  return stored
end

-- ms since the epoch as RFC 3339 in UTC with milliseconds, as src/time.rs writes it
-- (2026-12-05T13:16:00.982Z): days to a civil date by Howard Hinnant's algorithm.
local function rfc3339(ms)
  local s = math.floor(ms / 1000)
  local milli = ms - s * 1000
  local days = math.floor(s / 86400)
  local secs = s - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d, math.floor(secs / 3600),
    math.floor((secs % 3600) / 60), secs % 60, milli)
end

-- Records the action in the job's events stream (docs/store-format.md, "Events"): `XADD key
-- MAXLEN kept * action A by B [reason R] [until U] detail D` (U: a pause's end, ms). Its failure
-- (the key of another type) does not undo the action: the error's text is returned for the caller
-- to warn of, else false.
local function audit(key, kept, action, by, reason, detail, until_ms)
  local args = {key, 'MAXLEN', kept, '*', 'action', action, 'by', by}
  if reason ~= '' then
    args[#args + 1] = 'reason'
    args[#args + 1] = reason
  end
  if until_ms then
    args[#args + 1] = 'until'
    args[#args + 1] = string.format('%d', until_ms)
  end
  args[#args + 1] = 'detail'
  args[#args + 1] = detail
  local added = redis.pcall('XADD', unpack(args))
  if type(added) == 'table' and added.err then return added.err end
  return false
end
