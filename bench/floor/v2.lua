#!lua name=anarchon_floor_v2
-- The layout floor of store format 2 (docs/store-format.md, "Lease layout, format 2"): a claim and
-- a finish that do only the reads and writes the layout itself needs at steady state, so that
-- bench/floor.py can put anarchon's scripts beside them in the same run. Not product code: no key
-- type checks, no validation of what is read, no release marks, pauses, hand-overs, first_seen or
-- format marker checks beyond :job `format`; only the paths a steady state takes (a new run won;
-- its own finish). Same KEYS and ARGV as lua/lease/v2/claim.lua and finish.lua.
-- What it does keep (the layout's data): the :live value of a run in progress, the :results
-- member of an ended attempt, :job fence and protect_ms, and history trimmed in batches of 1% (at
-- most 16) by the fencing token, as anarchon does.

local function claim(KEYS, ARGV)
  local slot, token, runner = ARGV[1], ARGV[2], ARGV[3]
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local lease_ms = tonumber(ARGV[4])
  local lease_end = now + lease_ms
  -- Runs in progress: this slot's, and any other's live lease (overlap).
  local live = redis.call('HGETALL', KEYS[1])
  for i = 1, #live, 2 do
    local o = cjson.decode(live[i + 1])
    if live[i] == slot then return {'running', '', '', o.runner, 'running', tostring(now), '', ''} end
    if o.lease_end > now then return {'overlap', '', '', o.runner, 'running', tostring(now), live[i], ''} end
  end
  if #redis.call('ZRANGEBYSCORE', KEYS[2], slot, slot, 'LIMIT', 0, 1) > 0 then
    return {'done', '', '', '', 'finished', tostring(now), '', ''}
  end
  local job = redis.call('HMGET', KEYS[3], 'trimmed_to', 'protect_ms', 'format')
  if job[1] and tonumber(slot) <= tonumber(job[1]) then
    return {'done', '', '', '', 'trimmed', tostring(now), '', ''}
  end
  local fence = redis.call('HINCRBY', KEYS[3], 'fence', 1)
  redis.call('HSET', KEYS[1], slot, '{"attempt":1,"token":"' .. token .. '","runner":"' .. runner ..
    '","lease_end":' .. lease_end .. ',"claimed_at":' .. now .. ',"started_at":' .. now ..
    ',"kind":"' .. ARGV[7] .. '","lease_ms":' .. lease_ms .. ',"fence":' .. fence .. '}')
  local keep_ms = tonumber(ARGV[10])
  if not job[2] or tonumber(job[2]) < keep_ms then redis.call('HSET', KEYS[3], 'protect_ms', keep_ms) end
  if job[3] ~= '2' then redis.call('HSET', KEYS[3], 'format', '2') end
  local history = tonumber(ARGV[8])
  local every = math.max(1, math.min(16, math.floor(history / 100)))
  if fence % every == 0 then
    local excess = redis.call('ZCARD', KEYS[2]) + 1 - history
    if excess > 0 then
      local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - keep_ms), 'WITHSCORES',
        'LIMIT', 0, math.min(excess, 16))
      if #old > 0 then
        redis.call('ZREMRANGEBYSCORE', KEYS[2], old[2], old[#old])
        redis.call('HSET', KEYS[3], 'trimmed_to', old[#old])
      end
    end
  end
  return {'won', '1', tostring(lease_end), runner, 'running', tostring(now), '', tostring(fence)}
end

local function finish(KEYS, ARGV)
  local slot, token, status = ARGV[1], ARGV[2], ARGV[3]
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local text = redis.call('HGET', KEYS[1], slot)
  if not text then return {'lost', '', '', '', '', tostring(now)} end
  local run = cjson.decode(text)
  if run.token ~= token then return {'lost', '', '', '', '', tostring(now)} end
  redis.call('ZADD', KEYS[2], slot, '{"attempt":' .. run.attempt .. ',"token":"' .. token ..
    '","runner":"' .. run.runner .. '","status":"' .. status .. '","claimed_at":' .. run.claimed_at ..
    ',"ended_at":' .. now .. ',"fence":' .. run.fence .. ',"result":' .. ARGV[4] .. '}')
  redis.call('HDEL', KEYS[1], slot)
  return {'ok', tostring(run.attempt), tostring(run.lease_end), run.runner, status, tostring(now)}
end

redis.register_function('floor_v2_claim', claim)
redis.register_function('floor_v2_finish', finish)
