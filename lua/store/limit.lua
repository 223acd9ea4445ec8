-- limit(names...): permits of named limits shared by any jobs and hosts (`--limit NAME=N`,
-- docs/store-format.md, "Limits"). A run holds one permit of each of its limits from just after
-- its claim was won to its end, and its permit lapses with its lease: a holder that dies keeps none.
-- KEYS: for each limit, its permits ({<prefix>}:limit:<name>, sorted set: member <job>@<slot>, the
--       run; score: when the permit lapses, ms by the server's clock) and its holders
--       ({<prefix>}:limit:<name>:who, hash: field the run, value {"token","runner"}), then the
--       runs waiting for room ({<prefix>}:limit:<name>:waiting, sorted set: member the run, score
--       when its wait lapses unless asked again). Every limit shares the hash tag {<prefix>}: one
--       script takes all of a run's permits at once.
-- ARGV: 1 take | renew | give, 2 run (<job>@<slot>), 3 token (the attempt's), 4 runner,
--       5 lease_ms, then for each limit its size N (take only).
-- Reply:
--   take: {'taken'}: a permit of every limit is the run's now (a run that held one already keeps
--         it, whoever held it for it: a takeover won the run's lease), until now + lease_ms; or
--         {'full', <name>, <N>, <holder run>, <its runner>, <its lapse ms>, ...}: the first limit
--         without room, and who holds its permits; nothing written.
--   renew: {'renewed'} (each permit lapses lease_ms from now) or {'lost', <name>}: a permit is no
--         longer this token's (it lapsed and another run took the room, or a takeover holds it);
--         nothing written then.
--   give: {'given', <count>}: the permits this token held are freed.
-- A key of another type answers ANARCHON_WRONGTYPE and writes nothing.
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end
local action, run, token, runner = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local lease_ms = tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limits = #KEYS / 3

for i = 1, #KEYS do
  local found = redis.call('TYPE', KEYS[i])['ok']
  local wanted = (i % 3 == 2) and 'hash' or 'zset'
  if found ~= 'none' and found ~= wanted then
    return redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[i] .. ' ' .. found .. ' ' .. wanted)
  end
end

-- The name of limit i, from its key: what follows `}:limit:`.
local function name_of(i)
  return string.match(KEYS[3 * i - 2], '}:limit:(.*)$') or KEYS[3 * i - 2]
end

-- Whether `token` holds the run's permit of limit i.
local function holds(i)
  local who = redis.call('HGET', KEYS[3 * i - 1], run)
  if not who then return false end
  local ok, h = pcall(cjson.decode, who)
  return ok and type(h) == 'table' and h.token == token
end

local until_text = string.format('%d', now + lease_ms)
local holder = cjson.encode({token = token, runner = runner})

if action == 'take' then
  -- Lapsed permits first: their runs' holders are gone (or their runs ended unsaid).
  for i = 1, limits do
    local permits, who = KEYS[3 * i - 2], KEYS[3 * i - 1]
    local lapsed = redis.call('ZRANGEBYSCORE', permits, '-inf', now)
    if #lapsed > 0 then
      redis.call('ZREMRANGEBYSCORE', permits, '-inf', now)
      redis.call('HDEL', who, unpack(lapsed))
    end
    redis.call('ZREMRANGEBYSCORE', KEYS[3 * i], '-inf', now)
  end
  for i = 1, limits do
    local permits, who = KEYS[3 * i - 2], KEYS[3 * i - 1]
    local size = tonumber(ARGV[5 + i])
    if not redis.call('ZSCORE', permits, run) and redis.call('ZCARD', permits) >= size then
      -- Said waiting (for `list` and the metrics) until it asks again or its wait lapses.
      redis.call('ZADD', KEYS[3 * i], now + math.max(lease_ms, 2000), run)
      local reply = {'full', name_of(i), string.format('%d', size)}
      local held = redis.call('ZRANGE', permits, 0, -1, 'WITHSCORES')
      for j = 1, #held, 2 do
        local h = redis.call('HGET', who, held[j])
        local ok, decoded = pcall(cjson.decode, h or '')
        reply[#reply + 1] = held[j]
        reply[#reply + 1] = (ok and type(decoded) == 'table' and decoded.runner) or ''
        reply[#reply + 1] = held[j + 1]
      end
      return reply
    end
  end
  for i = 1, limits do
    redis.call('ZADD', KEYS[3 * i - 2], until_text, run)
    redis.call('HSET', KEYS[3 * i - 1], run, holder)
    redis.call('ZREM', KEYS[3 * i], run)
  end
  return {'taken'}
end

if action == 'renew' then
  for i = 1, limits do
    if not holds(i) or not redis.call('ZSCORE', KEYS[3 * i - 2], run) then
      return {'lost', name_of(i)}
    end
  end
  -- A renewal moves scores it holds (adds no memory) and must pass at a full server, as the
  -- lease's does (lua/lease/v1/lib.lua, renew_in_place): HDEL first, never refused there, lets
  -- the script's writes go on. The field never exists.
  redis.call('HDEL', KEYS[2], 'anarchon: a renewal adds no memory')
  for i = 1, limits do
    redis.call('ZADD', KEYS[3 * i - 2], until_text, run)
  end
  return {'renewed'}
end

if action == 'give' then
  local given = 0
  for i = 1, limits do
    redis.call('ZREM', KEYS[3 * i], run)
    if holds(i) then
      given = given + redis.call('ZREM', KEYS[3 * i - 2], run)
      redis.call('HDEL', KEYS[3 * i - 1], run)
    end
  end
  return {'given', string.format('%d', given)}
end

return redis.error_reply('ANARCHON_USAGE limit: unknown action ' .. tostring(action))
