-- Store format 2, lease layout: shared helpers, prepended to every script in lua/v2/ (src/scripts.rs).
-- docs/store-format.md ("Store format 2") is the prose version; keep the two in step.
--
-- KEYS, the same for every script:
--   1 live     hash    one field per run in progress: <slot> -> JSON of its current attempt
--   2 results  zset    one member per ended attempt (JSON), score = slot: all history an ended run keeps
--   3 runs     stream  one entry per ended attempt: slot, attempt, status (a feed for followers)
--   4 job      hash    protect_ms, trimmed_to: what the job's claimants recorded
--   5 state    string  the format 2 marker (a format 1 job's state hash until it is converted)
--   6 active, 7 slots  format 1 keys, read once when a format 1 job is converted, then deleted
--
-- Format 1 kept nine hash fields per run for ever and a zset beside them; format 2 keeps a run in
-- :live only while it is in progress. An ended run is its :results members: a claim of a slot with no
-- :live field and no :results member is a new run (unless trimming went past it: :job trimmed_to).

-- Redis 5 and 6 refuse writes after TIME unless effects replication is on; 7+ always has it.
if redis.replicate_commands then pcall(redis.replicate_commands) end

local EXPECTED_TYPES = {'hash', 'zset', 'stream', 'hash'}
local MARKER = 'anarchon store format 2: runs in progress are in :live, ended ones in :results'

-- Milliseconds since the epoch by the server's clock: leases never depend on a client's clock.
local function server_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- An integer as decimal text, never in exponent notation (tostring gives 14 digits at most).
local function int(n)
  return string.format('%d', n)
end

local function key_type(key)
  local found = redis.call('TYPE', key)
  if type(found) == 'table' then found = found.ok end
  return found
end

local function wrongtype(key, found, expected)
  return redis.error_reply('ANARCHON_WRONGTYPE ' .. key .. ' ' .. found .. ' ' .. expected)
end

local function corrupt(key, what)
  return redis.error_reply('ANARCHON_CORRUPT ' .. key .. ' ' .. what)
end

-- A key of another type, written by another program, is refused naming the key, before any write.
-- Keys a script reads before its first write are checked by that read (checked, below: no extra
-- command); :runs, which is only written, by its TYPE here.
local function check_key_types()
  local found = key_type(KEYS[3])
  if found ~= 'none' and found ~= 'stream' then return wrongtype(KEYS[3], found, 'stream') end
  return nil
end

-- A read of KEYS[i]: its reply, or nil and an error reply naming the key when it has another type.
local function checked(i, ...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply.err then
    if string.sub(reply.err, 1, 9) == 'WRONGTYPE' then
      return nil, wrongtype(KEYS[i], key_type(KEYS[i]), EXPECTED_TYPES[i])
    end
    return nil, reply
  end
  return reply
end

-- A decimal integer as anarchon writes it (times, attempts): no fraction, exponent or spaces.
local function is_int(text)
  return type(text) == 'string' and string.match(text, '^%-?%d+$') ~= nil and #text <= 16
end

local function is_whole(n)
  return type(n) == 'number' and n == math.floor(n) and n > -1e16 and n < 1e16
end

-- A run in progress as :live holds it: the current attempt. lease_ms (the lease it was claimed
-- with) lets a heartbeat without --lease renew by as much.
local function encode_live(run)
  return '{"attempt":' .. int(run.attempt) .. ',"token":' .. cjson.encode(run.token) ..
    ',"runner":' .. cjson.encode(run.runner) .. ',"lease_end":' .. int(run.lease_end) ..
    ',"claimed_at":' .. int(run.claimed_at) .. ',"started_at":' .. int(run.started_at) ..
    ',"kind":' .. cjson.encode(run.kind) .. ',"lease_ms":' .. int(run.lease_ms) .. '}'
end

-- Decodes and checks one :live value; garbage written by hand is refused (naming key and slot)
-- before anything is written. Returns the run, or nil and an error reply.
local function decode_live(slot, text)
  local ok, run = pcall(cjson.decode, text)
  local function bad(why)
    return nil, corrupt(KEYS[1], 'field ' .. slot .. ' ' .. why)
  end
  if not ok or type(run) ~= 'table' then return bad('is not a JSON object') end
  if not is_whole(run.attempt) or run.attempt < 1 or run.attempt > 1000000 then
    return bad('has no attempt from 1 to 1000000')
  end
  if type(run.token) ~= 'string' or run.token == '' then return bad('has no token') end
  if type(run.runner) ~= 'string' then return bad('has no runner') end
  for _, name in ipairs({'lease_end', 'claimed_at', 'started_at'}) do
    if not is_whole(run[name]) then return bad('has no integer ' .. name) end
  end
  if run.kind ~= 'scheduled' and run.kind ~= 'manual' then return bad('has no kind scheduled or manual') end
  if not is_whole(run.lease_ms) then run.lease_ms = 0 end
  return run
end

-- A :results member of an ended attempt. The slot is its score. kind is written only for manual
-- runs (absent means scheduled): every byte here is kept per run of history.
local function encode_result(run, status, ended_at, result_json)
  local kind = ''
  if run.kind == 'manual' then kind = ',"kind":"manual"' end
  return '{"attempt":' .. int(run.attempt) .. ',"token":' .. cjson.encode(run.token) ..
    ',"runner":' .. cjson.encode(run.runner) .. ',"status":"' .. status ..
    '","claimed_at":' .. int(run.claimed_at) .. ',"ended_at":' .. int(ended_at) .. kind ..
    ',"result":' .. result_json .. '}'
end

-- Records the end of one attempt: its :results member and a :runs entry. result_json is JSON text
-- validated by the client, or 'null'. The ZADD is always a script's first write (and checks the
-- key's type): returns an error reply, nothing written, when :results has another type.
local function record_attempt(slot, run, status, ended_at, result_json)
  local _, err = checked(2, 'ZADD', KEYS[2], slot, encode_result(run, status, ended_at, result_json))
  if err then return err end
  redis.call('XADD', KEYS[3], '*', 'slot', slot, 'attempt', int(run.attempt), 'status', status)
  return nil
end

-- The run in progress `slot` (decoded and checked), false when there is none, or nil and an error.
local function live_run(slot)
  local text, err = checked(1, 'HGET', KEYS[1], slot)
  if err then return nil, err end
  if not text then return false end
  return decode_live(slot, text)
end

-- How an ended run ended: its last attempt's member (format 1 members read the same).
-- Returns nil when the slot has no member, or the final attempt, or nil and an error reply.
local STATUSES = {finished = true, failed = true, interrupted = true}
local function ended_run(slot)
  local members, err = checked(2, 'ZRANGEBYSCORE', KEYS[2], slot, slot)
  if err then return nil, err end
  local final = nil
  for _, m in ipairs(members) do
    local ok, r = pcall(cjson.decode, m)
    if not ok or type(r) ~= 'table' or not STATUSES[r.status] or not is_whole(r.attempt) then
      return nil, corrupt(KEYS[2], 'member of slot ' .. slot .. ' is not a result of an ended attempt')
    end
    if not final or r.attempt > final.attempt then final = r end
  end
  return final
end

-- Every run in progress other than `except`, decoded and checked: {slot, run} pairs.
local function live_runs(except)
  local flat = redis.call('HGETALL', KEYS[1])
  local out = {}
  for i = 1, #flat, 2 do
    local s = flat[i]
    if not is_int(s) then return nil, corrupt(KEYS[1], 'field ' .. s .. ' is not a slot') end
    if s ~= except then
      local run, err = decode_live(s, flat[i + 1])
      if not run then return nil, err end
      out[#out + 1] = {s, run}
    end
  end
  return out
end

-- Converts a format 1 job the first time a format 2 script touches it (`anarchon migrate` does the
-- same ahead of time): its runs in progress move to :live; its ended runs are already in :results,
-- which both formats share, so nothing else is kept. The format 1 keys are then deleted (UNLINK:
-- freed off the main thread) and :state becomes a string marker, so that a format 1 script that
-- read the format key before the switch is refused (its first command on :state is a WRONGTYPE)
-- instead of finding no state and running a run again. `create`: a claim marks a new job too.
-- Costs a read per run in progress, whatever the history's size. Returns an error reply or nil.
local V1_FIELDS = {'status', 'attempt', 'token', 'runner', 'lease_end', 'claimed_at', 'started_at', 'kind'}
local function ensure_format_2(create)
  local found = key_type(KEYS[5])
  if found == 'string' then return nil end
  -- About to write (the marker, a conversion): the keys the script reads later are checked first,
  -- so a refusal never leaves a write behind. A job pays for this once.
  for i = 1, 4 do
    local t = key_type(KEYS[i])
    if t ~= 'none' and t ~= EXPECTED_TYPES[i] then return wrongtype(KEYS[i], t, EXPECTED_TYPES[i]) end
  end
  if found == 'none' then
    if create then redis.call('SET', KEYS[5], MARKER) end
    return nil
  end
  if found ~= 'hash' then return wrongtype(KEYS[5], found, 'string') end
  local t6, t7 = key_type(KEYS[6]), key_type(KEYS[7])
  if t6 ~= 'none' and t6 ~= 'set' then return wrongtype(KEYS[6], t6, 'set') end
  if t7 ~= 'none' and t7 ~= 'zset' then return wrongtype(KEYS[7], t7, 'zset') end
  local moving = {}
  for _, s in ipairs(redis.call('SMEMBERS', KEYS[6])) do
    if not is_int(s) then return corrupt(KEYS[6], 'member ' .. s .. ' is not a slot') end
    local names = {}
    for i, name in ipairs(V1_FIELDS) do names[i] = s .. ':' .. name end
    local v = redis.call('HMGET', KEYS[5], unpack(names))
    if v[1] == 'running' then
      for i = 2, 7 do
        if (i == 3 or i == 4) and not v[i] then return corrupt(KEYS[5], 'field ' .. names[i] .. ' is missing') end
        if i ~= 3 and i ~= 4 and not is_int(v[i]) then return corrupt(KEYS[5], 'field ' .. names[i] .. ' is not an integer') end
      end
      moving[#moving + 1] = {s, {attempt = tonumber(v[2]), token = v[3], runner = v[4],
        lease_end = tonumber(v[5]), claimed_at = tonumber(v[6]), started_at = tonumber(v[7]),
        kind = v[8] == 'manual' and 'manual' or 'scheduled', lease_ms = 0}}
    end
  end
  for _, pair in ipairs(moving) do redis.call('HSET', KEYS[1], pair[1], encode_live(pair[2])) end
  redis.call('UNLINK', KEYS[5], KEYS[6], KEYS[7])
  redis.call('SET', KEYS[5], MARKER)
  return nil
end

-- What the job's claimants recorded in KEYS[4] (both fields optional, integers in ms):
--   protect_ms   the longest time after its slot that any claimant may still claim a run;
--   trimmed_to   the newest slot trimming ever removed (a claim of a run at or before it is refused).
-- Returns protect, stored protect, trimmed_to; or nil and an error reply.
local function read_job_limits(keep_ms)
  local v, err = checked(4, 'HMGET', KEYS[4], 'protect_ms', 'trimmed_to')
  if err then return nil, err end
  local stored = tonumber(v[1])
  local protect = keep_ms
  if stored and stored > protect then protect = stored end
  return protect, stored, tonumber(v[2])
end

-- Plans trimming (see lua/lib.lua for the rules, which are the same). History size counts ended
-- attempts (:results members) and runs in progress: one per run unless a lease was taken over.
-- Walks :results from the oldest slot after `cursor`, looking at no more than `budget` members, and
-- never picks a run in progress or one younger than keep_ms. Reads only. Returns the slots to trim,
-- whether the walk is complete, and the cursor to go on from; or nil and an error reply.
local function plan_trim(now, history_size, ttl_ms, keep_ms, budget, adding, cursor, already)
  local ended, err = checked(2, 'ZCARD', KEYS[2])
  if err then return nil, err end
  local live
  live, err = checked(1, 'HLEN', KEYS[1])
  if err then return nil, err end
  local need = ended + live + adding - history_size - already
  local expire_before = nil
  if ttl_ms > 0 then expire_before = now - ttl_ms end
  local trimmed = {}
  if need <= 0 and not expire_before then return trimmed, true, cursor end
  local examined = 0
  while examined < budget do
    -- Members are whole results: fetch no more than can go (at steady state, one), unless a TTL
    -- asks to look further.
    local want = math.max(need, 1)
    if expire_before then want = 16 end
    local page = redis.call('ZRANGEBYSCORE', KEYS[2], cursor, '(' .. int(now - keep_ms), 'WITHSCORES',
      'LIMIT', 0, math.min(want, budget - examined))
    if #page == 0 then return trimmed, true, cursor end
    local i = 1
    while i <= #page do
      local s = page[i + 1]
      if not is_int(s) then return nil, corrupt(KEYS[2], 'score ' .. s .. ' is not a slot') end
      local members = 0
      while i <= #page and page[i + 1] == s do
        members = members + 1
        i = i + 2
      end
      local expired = expire_before ~= nil and tonumber(s) < expire_before
      if need <= 0 and not expired then return trimmed, true, cursor end
      examined = examined + members
      cursor = '(' .. s
      if redis.call('HEXISTS', KEYS[1], s) == 0 then
        trimmed[#trimmed + 1] = s
        need = need - members
      end
    end
  end
  return trimmed, false, cursor
end

-- Deletes the planned runs' members, trims the :runs feed to about as many entries (whole nodes
-- only, `~`: the feed is read from its end, and whole nodes cost nothing to drop), and raises the
-- job's trim horizon.
local function apply_trim(trimmed, horizon)
  if #trimmed == 0 then return end
  local newest = nil
  for _, s in ipairs(trimmed) do
    redis.call('ZREMRANGEBYSCORE', KEYS[2], s, s)
    if not newest or tonumber(s) > newest then newest = tonumber(s) end
  end
  redis.call('XTRIM', KEYS[3], 'MAXLEN', '~', redis.call('ZCARD', KEYS[2]))
  if not horizon or newest > horizon then
    redis.call('HSET', KEYS[4], 'trimmed_to', int(newest))
  end
end
