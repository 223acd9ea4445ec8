#!lua name=anarchon_floor_v1
-- The layout floor of store format 1 (docs/store-format.md, "Lease layout, format 1"): a claim and
-- a finish that do only the reads and writes the layout itself needs at steady state, so that
-- bench/floor.py can put anarchon's scripts beside them in the same run. Not product code: no key
-- type checks, no validation of what is read, no release marks, pauses, hand-overs or overlap
-- policy beyond "a live run answers overlap"; only the paths a steady state takes (a new run won;
-- its own finish). Same KEYS and ARGV as lua/lease/v1/claim.lua and finish.lua.
-- What it does keep (the layout's data, so that :state has the same size and encoding as
-- anarchon's): every :state field of a run in progress, :active, :slots, the :runs entry and the
-- :results member of an ended attempt, :job fence and fence:<slot>, protect_ms, and history
-- trimmed and ended runs compacted to `status` alone in batches of 1% (at most 16), as anarchon
-- does.

local function claim(KEYS, ARGV)
  local slot, token, runner = ARGV[1], ARGV[2], ARGV[3]
  local t = redis.call('TIME')
  local micros = tonumber(t[2])
  local now = tonumber(t[1]) * 1000 + math.floor(micros / 1000)
  local lease_end = now + tonumber(ARGV[4])
  local p = slot .. ':'
  local run = redis.call('HMGET', KEYS[1], p .. 'status', p .. 'attempt', p .. 'token', p .. 'lease_end')
  if run[1] then return {'done', run[2], run[4], '', run[1], tostring(now), '', ''} end
  local job = redis.call('HMGET', KEYS[6], 'trimmed_to', 'protect_ms', 'fence', 'compacted_to')
  if job[1] and tonumber(slot) <= tonumber(job[1]) then
    return {'done', '', '', '', 'trimmed', tostring(now), '', ''}
  end
  local active = {}
  for _, other in ipairs(redis.call('SMEMBERS', KEYS[2])) do
    active[other] = true
    local o = redis.call('HMGET', KEYS[1], other .. ':lease_end', other .. ':runner')
    if tonumber(o[1]) > now then return {'overlap', '', o[1], o[2], 'running', tostring(now), other, ''} end
  end
  local fence = (tonumber(job[3]) or 0) + 1
  redis.call('HSET', KEYS[1], p .. 'status', 'running', p .. 'attempt', 1, p .. 'token', token,
    p .. 'runner', runner, p .. 'lease_end', lease_end, p .. 'claimed_at', now, p .. 'started_at', now)
  redis.call('SADD', KEYS[2], slot)
  redis.call('ZADD', KEYS[3], slot, slot)
  redis.call('HSET', KEYS[6], 'fence', fence, 'fence:' .. slot, fence)
  local keep_ms = tonumber(ARGV[10])
  if not job[2] or tonumber(job[2]) < keep_ms then redis.call('HSET', KEYS[6], 'protect_ms', keep_ms) end
  local history = tonumber(ARGV[8])
  local batch = math.max(1, math.min(16, math.floor(history / 100)))
  if micros % batch == 0 then
    local budget = math.max(16, 2 * batch)
    -- Trim: the oldest runs over the history size, older than keep-claimable.
    local excess = redis.call('ZCARD', KEYS[3]) - history
    if excess > 0 then
      local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. (now - keep_ms), 'LIMIT', 0, math.min(excess, budget))
      if #old > 0 then
        local names = {}
        for _, s in ipairs(old) do
          for _, a in ipairs({'status', 'attempt', 'token', 'runner', 'lease_end', 'claimed_at', 'started_at'}) do
            names[#names + 1] = s .. ':' .. a
          end
        end
        redis.call('HDEL', KEYS[1], unpack(names))
        local fences = {}
        for i, s in ipairs(old) do fences[i] = 'fence:' .. s end
        redis.call('HDEL', KEYS[6], unpack(fences))
        redis.call('ZREM', KEYS[3], unpack(old))
        redis.call('ZREMRANGEBYSCORE', KEYS[5], old[1], old[#old])
        redis.call('XTRIM', KEYS[4], 'MAXLEN', redis.call('ZCARD', KEYS[5]))
        redis.call('HSET', KEYS[6], 'trimmed_to', old[#old])
      end
    end
    -- Compact: ended runs keep `status` alone.
    local from = job[4] and ('(' .. job[4]) or '-inf'
    local page = redis.call('ZRANGEBYSCORE', KEYS[3], from, '(' .. slot, 'LIMIT', 0, budget)
    local names, last = {}, nil
    for _, s in ipairs(page) do
      if active[s] then break end
      for _, a in ipairs({'attempt', 'token', 'runner', 'lease_end', 'claimed_at', 'started_at'}) do
        names[#names + 1] = s .. ':' .. a
      end
      last = s
    end
    if last then
      redis.call('HDEL', KEYS[1], unpack(names))
      redis.call('HSET', KEYS[6], 'compacted_to', last)
    end
  end
  return {'won', '1', tostring(lease_end), runner, 'running', tostring(now), '', tostring(fence)}
end

local function finish(KEYS, ARGV)
  local slot, token, status = ARGV[1], ARGV[2], ARGV[3]
  local p = slot .. ':'
  local run = redis.call('HMGET', KEYS[1], p .. 'status', p .. 'attempt', p .. 'token', p .. 'runner',
    p .. 'claimed_at', p .. 'lease_end')
  if run[1] ~= 'running' or run[3] ~= token then return {'lost', '', '', '', '', ''} end
  local id = redis.call('XADD', KEYS[4], '*', 'slot', slot, 'attempt', run[2], 'token', token, 'status', status)
  local ended_at = string.sub(id, 1, string.find(id, '-', 1, true) - 1)
  redis.call('ZADD', KEYS[5], slot, '{"attempt":' .. run[2] .. ',"token":"' .. token .. '","runner":"' ..
    run[4] .. '","status":"' .. status .. '","claimed_at":' .. run[5] .. ',"ended_at":' .. ended_at ..
    ',"result":' .. ARGV[4] .. '}')
  redis.call('SREM', KEYS[2], slot)
  redis.call('HSET', KEYS[1], p .. 'status', status)
  return {'ok', run[2], run[6], run[4], status, ended_at}
end

redis.register_function('floor_v1_claim', claim)
redis.register_function('floor_v1_finish', finish)
