-- Shared helpers, prepended to every lease-layout script (see src/scripts.rs).
-- KEYS are always: 1 state (hash), 2 active (set), 3 slots (zset), 4 runs (stream), 5 results (zset),
-- and for claim and trim 6 job (hash: what the job's claimants recorded, see read_job_limits).
-- Store format v1 is described in docs/store-format.md; keep the two in step.

-- Redis 5 and 6 refuse writes after TIME unless effects replication is on; 7+ always has it.
if redis.replicate_commands then pcall(redis.replicate_commands) end

local EXPECTED_TYPES = {'hash', 'set', 'zset', 'stream', 'zset', 'hash'}

-- Every field a run has in the state hash, as "<slot>:<name>".
local RUN_FIELDS = {'status', 'attempt', 'token', 'runner', 'lease_end',
                    'claimed_at', 'started_at', 'finished_at', 'kind'}

-- Milliseconds since the epoch by the server's clock: leases never depend on a client's clock.
local function server_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Refuses to touch keys that another program wrote with another type, naming the key.
-- Without this a WRONGTYPE error would not say which of the five keys is wrong.
local function check_key_types(count)
  for i = 1, count do
    local found = redis.call('TYPE', KEYS[i])
    if type(found) == 'table' then found = found.ok end
    if found ~= 'none' and found ~= EXPECTED_TYPES[i] then
      return redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[i] .. ' ' .. found .. ' ' .. EXPECTED_TYPES[i])
    end
  end
  return nil
end

local function field(slot, name)
  return slot .. ':' .. name
end

-- Reads one run's fields into a table (missing fields are false).
local function read_run(slot)
  local names = {}
  for i, name in ipairs(RUN_FIELDS) do names[i] = field(slot, name) end
  local values = redis.call('HMGET', KEYS[1], unpack(names))
  local run = {}
  for i, name in ipairs(RUN_FIELDS) do run[name] = values[i] end
  return run
end

-- Integer fields must parse: garbage written by hand is reported with the key, never guessed at.
local function int_field(run, slot, name)
  local n = tonumber(run[name])
  if n == nil then
    return nil, redis.error_reply('ANARCHON_CORRUPT ' .. KEYS[1] .. ' field ' .. field(slot, name) ..
      ' is ' .. tostring(run[name]) .. ', not an integer')
  end
  return n
end

-- Records the end of one attempt: an entry in the runs stream and a member in the results zset.
-- result_json is JSON text validated by the client, or 'null'.
local function record_attempt(slot, run, status, ended_at, result_json)
  redis.call('XADD', KEYS[4], '*',
    'slot', slot, 'attempt', run.attempt, 'token', run.token, 'runner', run.runner or '',
    'status', status, 'claimed_at', run.claimed_at or '', 'ended_at', ended_at, 'kind', run.kind or 'scheduled')
  local member = '{"slot":' .. slot .. ',"attempt":' .. run.attempt ..
    ',"token":' .. cjson.encode(run.token) .. ',"runner":' .. cjson.encode(run.runner or '') ..
    ',"status":' .. cjson.encode(status) .. ',"claimed_at":' .. (tonumber(run.claimed_at) or 'null') ..
    ',"ended_at":' .. ended_at .. ',"result":' .. result_json .. '}'
  redis.call('ZADD', KEYS[5], slot, member)
end

-- What the job's claimants recorded in KEYS[6] (both fields optional, integers in ms):
--   protect_ms   the longest time after its slot that any claimant may still claim a run (max-late +
--                catch-up + lease x attempts): trimming must keep every run that young.
--   trimmed_to   the newest slot trimming ever removed: a run at or before it may have run already and
--                lost its state, so a claim of it is refused (answered done, status trimmed).
-- A claim raises protect_ms to its own keep_ms, so one host's `run --catch-up 2h` protects runs from
-- every other host's trimming and from `anarchon trim`.
local function read_job_limits(keep_ms)
  local v = redis.call('HMGET', KEYS[6], 'protect_ms', 'trimmed_to')
  local stored = tonumber(v[1])
  local protect = keep_ms
  if stored and stored > protect then protect = stored end
  return protect, stored, tonumber(v[2])
end

-- Trims history to history_size runs, and drops runs older than ttl_ms when ttl_ms > 0.
-- Never trims a run still in progress (in the active set) or one younger than keep_ms, which a late
-- claim could still ask for: trimming its state would let that claim run it twice. Runs that must
-- stay do not count against the trimming, so a job keeps history_size runs or its protected ones.
-- Walks the oldest runs first and stops after `budget` runs, so a claim stays quick; the rest goes
-- next time. Returns the list of trimmed slots (with dry_run, the ones it would trim).
local function trim_history(now, history_size, ttl_ms, keep_ms, budget, dry_run)
  local need = redis.call('ZCARD', KEYS[3]) - history_size
  local expire_before = nil
  if ttl_ms > 0 then expire_before = now - ttl_ms end
  local trimmed = {}
  local cursor = '-inf'
  local walking = true
  while walking and #trimmed < budget do
    local page = redis.call('ZRANGEBYSCORE', KEYS[3], cursor, '(' .. (now - keep_ms), 'LIMIT', 0, 100)
    if #page == 0 then break end
    for _, s in ipairs(page) do
      local expired = expire_before ~= nil and tonumber(s) < expire_before
      -- Oldest first: once no more are needed and this one has not expired, none later has.
      if need <= 0 and not expired then walking = false; break end
      if redis.call('SISMEMBER', KEYS[2], s) == 0 then
        trimmed[#trimmed + 1] = s
        need = need - 1
        if not dry_run then
          local names = {}
          for i, name in ipairs(RUN_FIELDS) do names[i] = field(s, name) end
          redis.call('HDEL', KEYS[1], unpack(names))
          redis.call('ZREM', KEYS[3], s)
          redis.call('ZREMRANGEBYSCORE', KEYS[5], s, s)
        end
        if #trimmed >= budget then walking = false; break end
      end
    end
    cursor = '(' .. page[#page]
  end
  if #trimmed > 0 and not dry_run then
    local newest = tonumber(trimmed[1])
    for _, t in ipairs(trimmed) do
      if tonumber(t) > newest then newest = tonumber(t) end
    end
    local horizon = tonumber(redis.call('HGET', KEYS[6], 'trimmed_to'))
    if not horizon or newest > horizon then
      redis.call('HSET', KEYS[6], 'trimmed_to', newest)
    end
    -- The runs stream has no index by slot: drop the entries at its head (the oldest attempts)
    -- whose run is no longer in the slots zset. Entries of kept runs stay where they are.
    for _, entry in ipairs(redis.call('XRANGE', KEYS[4], '-', '+', 'COUNT', math.min(budget * 4, 100000))) do
      local fields = entry[2]
      for i = 1, #fields, 2 do
        if fields[i] == 'slot' then
          if not redis.call('ZSCORE', KEYS[3], fields[i + 1]) then
            redis.call('XDEL', KEYS[4], entry[1])
          end
          break
        end
      end
    end
  end
  return trimmed
end
