-- Store format 2, lease layout: shared helpers, prepended to every script in lua/lease/v2/ (src/scripts.rs).
-- docs/store-format.md ("Store format 2") is the prose version; keep the two in step.
--
-- KEYS, the same for every script:
--   1 live     hash    one field per run in progress: <slot> -> JSON of its current attempt
--   2 results  zset    one member per ended attempt (JSON), score = slot: all an ended run keeps
--   3 job      hash    protect_ms, trimmed_to (what the job's claimants recorded), format
--   4 state    string  the format 2 marker (a format 1 job's state hash until it is converted)
--   5 active, 6 slots, 7 runs   format 1 keys: read once when a format 1 job is converted, then
--                               deleted
--
-- Format 1 kept nine hash fields per run for ever, a zset and a stream entry beside them; format 2
-- keeps a run in :live only while it is in progress, and an ended run is its :results members. A
-- claim of a slot with no :live field and no :results member is a new run (unless trimming went
-- past it: :job trimmed_to). Every script here costs a handful of commands whatever the history's
-- size (bench/server.sh measures them).

-- Redis 5 and 6 refuse writes after TIME unless effects replication is on; 7+ always has it (and
-- REDIS_VERSION_NUM, new in 7: there the call, a no-op, would cost every script ~0.3 µs).
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end

local EXPECTED_TYPES = {'hash', 'zset', 'hash'}
local MARKER = 'anarchon store format 2: runs in progress are in :live, ended ones in :results'

-- Milliseconds since the epoch by the server's clock: leases never depend on a client's clock.
local function server_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Called before a renewal's one write, which rewrites a value the key holds already (a lease's
-- end) and so adds no memory: at a full server (maxmemory under noeviction) Redis refuses a
-- script's first write of a command that may grow memory (HSET, ZADD), but lets a script that has
-- written go on, for its atomicity; HDEL, which can only free memory, is never refused. So a
-- holder keeps its lease at a full server until its end can be recorded, on Redis 5 and 6 (EVAL)
-- as on 7 and Valkey (whose function of the script declares allow-oom). The field never exists:
-- nothing changes, and nothing is replicated.
local function renew_in_place(key)
  redis.call('HDEL', key, 'anarchon: a renewal adds no memory')
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

-- A read of KEYS[i]: its reply, or nil and an error reply naming the key when it has another type.
-- Every script reads each key it writes before its first write, so a key that another program
-- wrote with another type is refused, and nothing is written, at no cost of an extra TYPE.
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

-- A decimal integer as anarchon writes it (slots): no fraction, exponent or spaces.
local function is_int(text)
  -- (string.find, not string.match: it answers with positions, and allocates no copy of the text.)
  return type(text) == 'string' and #text <= 16 and string.find(text, '^%-?%d+$') ~= nil
end

local function is_whole(n)
  return type(n) == 'number' and n == math.floor(n) and n > -1e16 and n < 1e16
end

-- Characters a JSON string must escape (and `/`, which cjson escapes, and every byte above 127,
-- left to cjson): a text without them is quoted as it is.
local JSON_ESCAPED = '[%c"\\/\128-\255]'

-- `text` as a JSON string, exactly as cjson.encode writes it. Tokens, runners and kinds almost
-- never need escaping, and cjson.encode allocates a buffer for every call: three calls in every
-- claim and two in every finish, which a herd pays for at every slot (bench/floor.sh).
local function json_string(text)
  if string.find(text, JSON_ESCAPED) then return cjson.encode(text) end
  return '"' .. text .. '"'
end

-- A run in progress as :live holds it: the current attempt. lease_ms (the lease it was claimed
-- with) lets a heartbeat without --lease renew by as much.
local function encode_live(run)
  local fence = ''
  if run.fence then fence = ',"fence":' .. int(run.fence) end
  return '{"attempt":' .. int(run.attempt) .. ',"token":' .. json_string(run.token) ..
    ',"runner":' .. json_string(run.runner) .. ',"lease_end":' .. int(run.lease_end) ..
    ',"claimed_at":' .. int(run.claimed_at) .. ',"started_at":' .. int(run.started_at) ..
    ',"kind":' .. json_string(run.kind) .. ',"lease_ms":' .. int(run.lease_ms) .. fence .. '}'
end

-- encode_live of a new run's first attempt, from its parts: the same text, without the table a
-- run would be built as first (a claim of a new run is the common claim; every table is garbage
-- the server's Lua collector must walk later), and `now` made text once for both of its times.
local function encode_first_attempt(token, runner, lease_end, now, kind, lease_ms, fence)
  local now_text = int(now)
  return '{"attempt":1,"token":' .. json_string(token) .. ',"runner":' .. json_string(runner) ..
    ',"lease_end":' .. int(lease_end) .. ',"claimed_at":' .. now_text .. ',"started_at":' .. now_text ..
    ',"kind":' .. json_string(kind) .. ',"lease_ms":' .. int(lease_ms) .. ',"fence":' .. int(fence) .. '}'
end

-- The next fencing token of the job: strictly greater than every earlier won claim's (first
-- attempts and takeovers, every slot and kind), so a system the command writes to can refuse a
-- stale holder (a paused VM, a partitioned host) whose token is lower than one it has seen.
local function next_fence()
  return redis.call('HINCRBY', KEYS[3], 'fence', 1)
end

-- Decodes and checks one :live value; garbage written by hand is refused (naming key and slot)
-- before anything is written. Returns the run, or nil and an error reply.
-- (Written without helper closures or table literals: it runs on every claim and finish, and every
-- allocation here is garbage the server's Lua collector must walk later.)
local function decode_live(slot, text)
  local ok, run = pcall(cjson.decode, text)
  local why = nil
  if not ok or type(run) ~= 'table' then
    why = 'is not a JSON object'
  elseif not is_whole(run.attempt) or run.attempt < 1 or run.attempt > 1000000 then
    why = 'has no attempt from 1 to 1000000'
  elseif type(run.token) ~= 'string' or run.token == '' then
    why = 'has no token'
  elseif type(run.runner) ~= 'string' then
    why = 'has no runner'
  elseif not (is_whole(run.lease_end) and is_whole(run.claimed_at) and is_whole(run.started_at)) then
    why = 'has no integer lease_end, claimed_at or started_at'
  elseif run.kind ~= 'scheduled' and run.kind ~= 'manual' then
    why = 'has no kind scheduled or manual'
  end
  if why then return nil, corrupt(KEYS[1], 'field ' .. slot .. ' ' .. why) end
  if not is_whole(run.lease_ms) then run.lease_ms = 0 end
  if not is_whole(run.fence) then run.fence = nil end
  return run
end

-- Every run in progress, decoded and checked: a table slot -> run, and their count; or nil and an
-- error reply. Runs in progress are few (one per job unless --overlap allow), so one HGETALL
-- answers both "is this slot in progress" and "which others are".
local function live_runs()
  local flat, err = checked(1, 'HGETALL', KEYS[1])
  if err then return nil, err end
  local runs, count = {}, 0
  for i = 1, #flat, 2 do
    local s = flat[i]
    if not is_int(s) then return nil, corrupt(KEYS[1], 'field ' .. s .. ' is not a slot') end
    local run
    run, err = decode_live(s, flat[i + 1])
    if not run then return nil, err end
    runs[s] = run
    count = count + 1
  end
  return runs, count
end

-- One run in progress (decoded and checked), false when there is none, or nil and an error reply.
local function live_run(slot)
  local text, err = checked(1, 'HGET', KEYS[1], slot)
  if err then return nil, err end
  if not text then return false end
  return decode_live(slot, text)
end

-- A :results member of an ended attempt. The slot is its score. kind is written only for manual
-- runs (absent means scheduled): every byte here is kept per run of history.
local function encode_result(run, status, ended_at, result_json)
  local kind = ''
  if run.kind == 'manual' then kind = ',"kind":"manual"' end
  if run.fence then kind = kind .. ',"fence":' .. int(run.fence) end
  return '{"attempt":' .. int(run.attempt) .. ',"token":' .. json_string(run.token) ..
    ',"runner":' .. json_string(run.runner) .. ',"status":"' .. status ..
    '","claimed_at":' .. int(run.claimed_at) .. ',"ended_at":' .. int(ended_at) .. kind ..
    ',"result":' .. result_json .. '}'
end

-- Records the end of one attempt: its :results member. result_json is JSON text validated by the
-- client, or 'null'. Where this is a script's first write it checks the key's type too: returns an
-- error reply, nothing written, when :results has another type.
local function record_attempt(slot, run, status, ended_at, result_json)
  local _, err = checked(2, 'ZADD', KEYS[2], slot, encode_result(run, status, ended_at, result_json))
  return err
end

-- Ends a run in progress: its attempt's :results member (as record_attempt), and its :live field
-- gone. Returns an error reply (nothing written) or nil.
local function end_live_run(slot, run, status, ended_at, result_json)
  local err = record_attempt(slot, run, status, ended_at, result_json)
  if err then return err end
  redis.call('HDEL', KEYS[1], slot)
  return nil
end

-- How an ended run ended: its last attempt's member (format 1 members read the same).
-- Returns nil when the slot has no member, or the final attempt, or nil and an error reply.
local STATUSES = {finished = true, failed = true, interrupted = true, skipped = true}
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

-- Heartbeat's and finish's answer for a token that no longer holds `slot`: lost, with the run's
-- attempt, runner and status as they are (its holder's, the final attempt of an ended run, or
-- nothing), and nothing written. Returns the reply, or nil and an error reply.
local function lost_reply(slot, run, now)
  if run then
    return {'lost', int(run.attempt), int(run.lease_end), run.runner, 'running', int(now)}
  end
  local final, err = ended_run(slot)
  if err then return nil, err end
  if final then return {'lost', int(final.attempt), '', final.runner, final.status, int(now)} end
  return {'lost', '', '', '', '', int(now)}
end

-- What the job hash (KEYS[3]) records, all optional: protect_ms, the longest time after its slot
-- that any claimant may still claim a run; trimmed_to, the newest slot trimming ever removed (a
-- claim of a run at or before it is refused); format, 2 once the job is in format 2; the pause
-- (lua/lease/pause.lua); fence, the last fencing token given (0: none yet); first_seen, when the job's
-- first claim reached the store (`run --catch-up` never catches up a slot before it).
-- Every integer field is checked before it is used: garbage written by hand (text, a fraction, an
-- exponent, a negative fence, which would let fencing tokens go back, a trim horizon after `now`,
-- which would make every claim answer trimmed) is refused naming the field, nothing written.
-- Returns {protect = max(keep_ms, recorded), stored_protect, trimmed_to, format, paused_at,
-- paused_until, resumed_at, fence, first_seen}, or nil and an error reply.
local JOB_FIELDS = {'protect_ms', 'trimmed_to', 'format', 'paused_at', 'paused_until', 'resumed_at',
  'fence', 'first_seen'}
local function read_job(keep_ms, now)
  local v, err = checked(3, 'HMGET', KEYS[3], unpack(JOB_FIELDS))
  if err then return nil, err end
  -- Each present integer field converted once, checked as it is (a whole number: digits alone,
  -- so no sign to test after converting). Absent fields cost nothing: most jobs have no pause.
  local trimmed_text = v[2]
  for i = 1, #JOB_FIELDS do
    local text = v[i]
    if i ~= 3 and text then
      if #text > 16 or not string.find(text, '^%d+$') then
        return nil, corrupt(KEYS[3], 'field ' .. JOB_FIELDS[i] .. ' is ' .. text .. ', not a whole number')
      end
      v[i] = tonumber(text)
    end
  end
  if now and v[2] and v[2] > now then
    return nil, corrupt(KEYS[3], 'field trimmed_to is ' .. trimmed_text .. ', a slot after the server\'s time ' .. int(now))
  end
  local stored = v[1] or nil
  local protect = keep_ms
  if stored and stored > protect then protect = stored end
  return {protect = protect, stored_protect = stored, trimmed_to = v[2] or nil, format = v[3],
    paused_at = v[4] or nil, paused_until = v[5] or nil, resumed_at = v[6] or nil,
    fence = v[7] or 0, first_seen = v[8] or nil}
end

-- Makes a job a format 2 job: `anarchon migrate` converts each format 1 job with it (`force`), and
-- a claim marks a new job. A format 1 job's runs in progress move to :live; its ended runs are
-- already in :results, which both formats share, so nothing else is kept: the format 1 keys are
-- deleted (UNLINK: freed off the main thread). :state becomes a string marker, so that a format 1
-- script that read the format key before the switch is refused (its first command on :state is a
-- WRONGTYPE) instead of finding no state and running a run again. `create`: a new job is marked
-- too (claims); heartbeat and finish never create a job. Costs a read per run in progress, whatever
-- the history's size.
-- Only `migrate` converts a job (`force`): a script of this format that meets format 1 data (a
-- store not converted yet, a job converted back by `migrate --to 1`, or one created in format 1
-- by a host that read the format key later) is refused as by a key of the other type and writes
-- nothing, and its caller runs format 1's script instead. Returns an error reply or nil.
local V1_FIELDS = {'status', 'attempt', 'token', 'runner', 'lease_end', 'claimed_at', 'started_at', 'kind'}
local function ensure_format_2(job, create, force)
  if job.format == '2' then return nil end
  local found = key_type(KEYS[4])
  if found == 'hash' and not force then return wrongtype(KEYS[4], 'hash', 'string') end
  if found == 'string' then
    -- The marker, or a string another program wrote: only the marker makes the job format 2 (a
    -- job converted by this or an earlier build; its :job says format 2 and never gets here but
    -- for a :job written by hand). Anything else is refused, naming the key, before any write.
    if redis.call('GET', KEYS[4]) ~= MARKER then
      return corrupt(KEYS[4], 'holds a string that is not the format 2 marker')
    end
    return nil
  end
  if found == 'none' and not create then return nil end
  if found ~= 'none' and found ~= 'hash' then return wrongtype(KEYS[4], found, 'string') end
  -- About to write: every key is checked first, so a refusal never leaves a write behind.
  for i = 1, 3 do
    local t = key_type(KEYS[i])
    if t ~= 'none' and t ~= EXPECTED_TYPES[i] then return wrongtype(KEYS[i], t, EXPECTED_TYPES[i]) end
  end
  local moving = {}
  if found == 'hash' then
    local t5 = key_type(KEYS[5])
    if t5 ~= 'none' and t5 ~= 'set' then return wrongtype(KEYS[5], t5, 'set') end
    for _, s in ipairs(redis.call('SMEMBERS', KEYS[5])) do
      if not is_int(s) then return corrupt(KEYS[5], 'member ' .. s .. ' is not a slot') end
      local names = {}
      for i, name in ipairs(V1_FIELDS) do names[i] = s .. ':' .. name end
      local v = redis.call('HMGET', KEYS[4], unpack(names))
      if v[1] == 'running' then
        for i = 2, 7 do
          if (i == 3 or i == 4) and not v[i] then return corrupt(KEYS[4], 'field ' .. names[i] .. ' is missing') end
          if i ~= 3 and i ~= 4 and not is_int(v[i]) then return corrupt(KEYS[4], 'field ' .. names[i] .. ' is not an integer') end
        end
        -- Its fencing token, which format 1 keeps in the job hash (fence:<slot>).
        local fence = redis.call('HGET', KEYS[3], 'fence:' .. s)
        if fence and not is_int(fence) then return corrupt(KEYS[3], 'field fence:' .. s .. ' is not an integer') end
        moving[#moving + 1] = {s, {attempt = tonumber(v[2]), token = v[3], runner = v[4],
          lease_end = tonumber(v[5]), claimed_at = tonumber(v[6]), started_at = tonumber(v[7]),
          kind = v[8] == 'manual' and 'manual' or 'scheduled', lease_ms = 0, fence = tonumber(fence)}}
      end
    end
  end
  for _, pair in ipairs(moving) do redis.call('HSET', KEYS[1], pair[1], encode_live(pair[2])) end
  -- Format 1's per-run fence fields go with its keys (the job's last fence, `fence`, stays: the
  -- tokens go on rising). One conversion per job: the job hash's fields are few.
  if found == 'hash' then
    local stale = {}
    for _, f in ipairs(redis.call('HKEYS', KEYS[3])) do
      if string.sub(f, 1, 6) == 'fence:' then stale[#stale + 1] = f end
    end
    if #stale > 0 then redis.call('HDEL', KEYS[3], unpack(stale)) end
  end
  if found == 'hash' then redis.call('UNLINK', KEYS[4], KEYS[5], KEYS[6], KEYS[7]) end
  redis.call('SET', KEYS[4], MARKER)
  redis.call('HSET', KEYS[3], 'format', '2')
  job.format = '2'
  return nil
end

-- The run in progress `slot` for heartbeat, finish and release, which never create a job: a run
-- in :live means the job is in format 2 already; otherwise a run claimed before its job was
-- converted is found after converting it. Returns the run, false when none is in progress, or nil
-- and an error reply.
local function find_run_in_progress(slot)
  local run, err = live_run(slot)
  if run ~= false then return run, err end
  err = ensure_format_2({}, false)
  if err then return nil, err end
  return live_run(slot)
end

-- For heartbeat and finish: the run in progress `slot` when `token` holds it; else nil and the
-- reply to return (lost, as lost_reply says, or an error reply).
local function held_run(slot, token, now)
  local run, err = find_run_in_progress(slot)
  if err then return nil, err end
  if run and run.token == token then return run end
  local reply
  reply, err = lost_reply(slot, run, now)
  return nil, reply or err
end

-- What a claim that does no history work trims, and what a claim with no other run in progress
-- ends or overtakes: empty tables never written to, so the common claim allocates none (every
-- table is garbage the server's Lua collector must walk later).
local NO_TRIM = {slots = {}, ranges = {}}
local NOTHING = {}

-- Plans trimming: history_size entries are kept (ended attempts, the :results members, and runs in
-- progress: one per run unless a lease was taken over), and with ttl_ms > 0 runs older than ttl_ms
-- go too. Never trims a run in progress, or one younger than keep_ms, which a late claim could still
-- ask for: trimming it would let that claim run it twice. Runs that must stay do not count against
-- the trimming. `adding` counts a run the caller is about to create, `already` entries an earlier
-- call of the same dry run planned. (Claims call it only every so often, and trim all of the
-- excess at once: one ZREMRANGEBYSCORE for a few runs, instead of commands on every claim.)
-- Walks :results from the oldest slot after `cursor` ('-inf' or '(<slot>'), looking at no more
-- than `budget` members, and fetches no more members than can go.
-- Reads only. Returns the plan ({slots = ..., ranges = {{from, to}, ...}}: the slots to trim, and
-- the score ranges that hold exactly their members), whether the walk is complete, and the cursor
-- to go on from; or nil and an error reply.
local function plan_trim(now, history_size, ttl_ms, keep_ms, budget, adding, cursor, already, live, live_count)
  local ended, err = checked(2, 'ZCARD', KEYS[2])
  if err then return nil, err end
  local need = ended + live_count + adding - history_size - already
  local expire_before = nil
  if ttl_ms > 0 then expire_before = now - ttl_ms end
  local trimmed = {slots = {}, ranges = {}}
  if need < 1 and not expire_before then return trimmed, true, cursor end
  local open_range = nil
  local examined = 0
  while examined < budget do
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
      if not live[s] then
        trimmed.slots[#trimmed.slots + 1] = s
        need = need - members
        -- Consecutive trimmed slots (no run in progress between them) go in one range.
        if open_range then
          open_range[2] = s
        else
          open_range = {s, s}
          trimmed.ranges[#trimmed.ranges + 1] = open_range
        end
      else
        open_range = nil
      end
    end
    -- Enough planned and no TTL to look for: the next member stays, so the walk is complete
    -- without fetching another page to find that out (a claim trims one run at a time at small
    -- history sizes: that page was a third of its history work).
    if need <= 0 and not expire_before then return trimmed, true, cursor end
  end
  return trimmed, false, cursor
end

-- Deletes the planned runs' members and raises the job's trim horizon past them.
local function apply_trim(trimmed, horizon)
  if #trimmed.slots == 0 then return end
  local newest = nil
  for _, range in ipairs(trimmed.ranges) do
    redis.call('ZREMRANGEBYSCORE', KEYS[2], range[1], range[2])
    if not newest or tonumber(range[2]) > newest then newest = tonumber(range[2]) end
  end
  if not horizon or newest > horizon then
    redis.call('HSET', KEYS[3], 'trimmed_to', int(newest))
  end
end
