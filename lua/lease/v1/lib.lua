-- Shared helpers, prepended to every lease-layout script (see src/scripts.rs).
-- KEYS are always: 1 state (hash), 2 active (set), 3 slots (zset), 4 runs (stream), 5 results (zset),
-- and for claim, heartbeat, finish, release and trim 6 job (hash: what the job's claimants
-- recorded, see read_job_limits, and an operator's release of a run in progress, release_mark).
-- Store format v1 is described in docs/store-format.md; keep the two in step.

-- Redis 5 and 6 refuse writes after TIME unless effects replication is on; 7+ always has it (and
-- REDIS_VERSION_NUM, new in 7: there the call, a no-op, would cost every script ~0.3 µs).
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end

local EXPECTED_TYPES = {'hash', 'set', 'zset', 'stream', 'zset', 'hash'}

-- Every field a run may have in the state hash, as "<slot>:<name>". What each stage of a run keeps
-- (docs/store-format.md, "What a format 1 reader may rely on"):
--   in progress, and ended while a late claim may still ask (its slot within keep-claimable):
--     status, attempt, token, runner, lease_end, claimed_at, started_at (kind: manual runs);
--   ended, older: status alone, until trimming removes the run. The attempt's facts are its
--     :results member and :runs entry all along. (finished_at and a scheduled kind are written
--     by earlier releases only.)
local RUN_FIELDS = {'status', 'attempt', 'token', 'runner', 'lease_end',
                    'claimed_at', 'started_at', 'finished_at', 'kind'}
-- What an ended run's state drops at the claim horizon.
local COMPACT_DROPS = {'attempt', 'token', 'lease_end', 'claimed_at', 'started_at', 'runner', 'kind',
                       'finished_at'}

-- A run's fencing token is no :state attribute (a new one would be a new store format: format 1
-- readers refuse attributes they do not know) but a field of the job hash, which they never
-- read: `fence:<slot>`, the current attempt's token, beside `fence`, the job's last. It goes when
-- the run's other fields do (compaction, trimming).
local function fence_field(slot)
  return 'fence:' .. slot
end

-- Deletes the fence fields of `slots` from KEYS[6] (one command for a batch).
local function forget_fences(slots)
  local names = {}
  for i, s in ipairs(slots) do names[i] = fence_field(s) end
  redis.call('HDEL', KEYS[6], unpack(names))
end

-- Milliseconds since the epoch by the server's clock: leases never depend on a client's clock.
-- The microseconds within that second come second: the claim paces its history work by them
-- (claim.lua), a draw that costs no command.
local function server_now_ms()
  local t = redis.call('TIME')
  local micros = tonumber(t[2])
  return tonumber(t[1]) * 1000 + math.floor(micros / 1000), micros
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

local function wrongtype(i, found)
  return redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[i] .. ' ' .. found .. ' ' .. EXPECTED_TYPES[i])
end

-- Refuses to touch keys that another program wrote with another type, naming the key.
-- Without this a WRONGTYPE error would not say which of the keys is wrong.
local function key_type_error(i)
  local found = redis.call('TYPE', KEYS[i])
  if type(found) == 'table' then found = found.ok end
  if found ~= 'none' and found ~= EXPECTED_TYPES[i] then return wrongtype(i, found) end
  return nil
end

-- The same for KEYS[1..count].
local function check_key_types(count)
  for i = 1, count do
    local err = key_type_error(i)
    if err then return err end
  end
  return nil
end

-- The same for KEYS[2], [4] and [5] (:active, :runs, :results), which claim and finish may write
-- without reading them first; the first read of every other key goes through `checked`, which
-- names a key of another type at no cost of an extra command.
local function check_written_types()
  return key_type_error(2) or key_type_error(4) or key_type_error(5)
end

-- redis.call(...) on KEYS[i], with a WRONGTYPE error turned into ANARCHON_WRONGTYPE naming the key:
-- returns the reply, or nil and the error reply. Every script reads a key this way before its first
-- write to it, so a key of another type is refused before anything is written.
local function checked(i, ...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply.err then
    if string.sub(reply.err, 1, 9) == 'WRONGTYPE' then
      local found = redis.call('TYPE', KEYS[i])
      if type(found) == 'table' then found = found.ok end
      return nil, wrongtype(i, found)
    end
    return nil, reply
  end
  return reply
end

-- An empty table that is never written to: the claim's common case (no other run in progress,
-- nothing to trim) then allocates none, as every table is garbage the server's Lua must collect.
local NOTHING = {}

local function field(slot, name)
  return slot .. ':' .. name
end

-- Reads the fields of one run the scripts act on into a table (missing fields are false); nil and
-- an error reply when the state key is of another type. `started_at` and `finished_at` are written
-- for other readers and never read here: on a cold server every field an HMGET returns costs a few
-- µs (bench/formats.py, ONLY=commands), and finish reads one run per `anarchon run`.
local function read_run(slot)
  local prefix = slot .. ':'
  local values, err = checked(1, 'HMGET', KEYS[1], prefix .. 'status', prefix .. 'attempt',
    prefix .. 'token', prefix .. 'runner', prefix .. 'lease_end', prefix .. 'claimed_at', prefix .. 'kind')
  if not values then return nil, err end
  return {status = values[1], attempt = values[2], token = values[3], runner = values[4],
    lease_end = values[5], claimed_at = values[6], kind = values[7]}
end

local function corrupt(key, what)
  return redis.error_reply('ANARCHON_CORRUPT ' .. key .. ' ' .. what)
end

-- A decimal integer as anarchon writes it (times, attempts): no fraction, exponent or spaces.
local function is_int(text)
  -- (string.find, not string.match: it answers with positions, and allocates no copy of the text.)
  return type(text) == 'string' and #text <= 16 and string.find(text, '^%-?%d+$') ~= nil
end

local STATUSES = {running = true, finished = true, failed = true, interrupted = true}
local KINDS = {scheduled = true, manual = true}

-- The error of validate_run: the field named, with its value and what is wrong.
local function bad_field(slot, run, name, why)
  return corrupt(KEYS[1], 'field ' .. field(slot, name) .. ' is ' .. tostring(run[name]) .. ', ' .. why)
end

-- Whether a time field is sound: an integer, or absent from an ended run (RUN_FIELDS above).
local function sound_time(value, ended)
  return (ended and not value) or is_int(value)
end

-- Checks every field of a run read with read_run before a script acts on it, so that garbage
-- written by hand is refused (naming key and field) before anything is written: a script never
-- writes first and fails after. A run with no status has no state. Returns an error reply or nil.
-- An ended run keeps fewer fields as it ages (RUN_FIELDS above); the ones it has must be sound.
-- (Written without closures or table literals: it runs for every run a script reads, and every
-- allocation is garbage the server's Lua collector must walk later.)
local function validate_run(slot, run)
  local status = run.status
  if not status then return nil end
  if not STATUSES[status] then
    return bad_field(slot, run, 'status', 'not running, finished, failed or interrupted')
  end
  local ended = status ~= 'running'
  local attempt = run.attempt
  if not (ended and not attempt) and
      (not is_int(attempt) or tonumber(attempt) < 1 or tonumber(attempt) > 1000000) then
    return bad_field(slot, run, 'attempt', 'not an integer from 1 to 1000000')
  end
  if not (ended and not run.token) and (not run.token or run.token == '') then
    return bad_field(slot, run, 'token', 'not a token')
  end
  if not sound_time(run.lease_end, ended) then return bad_field(slot, run, 'lease_end', 'not an integer') end
  if not sound_time(run.claimed_at, ended) then return bad_field(slot, run, 'claimed_at', 'not an integer') end
  if run.kind and not KINDS[run.kind] then return bad_field(slot, run, 'kind', 'not scheduled or manual') end
  return nil
end

-- read_run, then validate_run: the run, or nil and an error reply (nothing has been written).
local function read_valid_run(slot)
  local run, err = read_run(slot)
  if not run then return nil, err end
  err = validate_run(slot, run)
  if err then return nil, err end
  return run
end

-- A member of :active or :slots must be a slot: a decimal integer.
-- (One string.find: digits alone, so no sign to test by converting it; claims that do history
-- work check a page of members each.)
local function validate_slot_member(key, member)
  if type(member) ~= 'string' or #member > 16 or not string.find(member, '^%d+$') then
    return corrupt(key, 'member ' .. tostring(member) .. ' is not a slot')
  end
  return nil
end

-- Characters a JSON string must escape (and `/`, which cjson escapes): a text without them is
-- quoted as it is.
local JSON_ESCAPED = '[%c"\\/\128-\255]'

-- `text` as it stands between the quotes of a JSON string, exactly as cjson.encode writes it. Tokens,
-- runners and statuses almost never need escaping, and cjson allocates for every call, which a cold
-- server pays for in every finish.
local function json_inner(text)
  if string.find(text, JSON_ESCAPED) then return string.sub(cjson.encode(text), 2, -2) end
  return text
end

-- The :results member of an ended attempt (docs/store-format.md, ":results members"): the slot is
-- its score. Built by one concatenation: every intermediate string is garbage for the server's Lua.
local function result_member(run, status, ended_at, result_json)
  -- A manual run says so in its member (as format 2's do): its state drops `kind` in time.
  -- Before "result", which ends every member (finish's idempotence reads it there).
  local kind = ''
  if run.kind == 'manual' then kind = ',"kind":"manual"' end
  return '{"attempt":' .. run.attempt .. ',"token":"' .. json_inner(run.token) .. '","runner":"' ..
    json_inner(run.runner or '') .. '","status":"' .. json_inner(status) .. '","claimed_at":' ..
    (run.claimed_at or 'null') .. ',"ended_at":' .. ended_at .. kind .. ',"result":' .. result_json .. '}'
end

-- The :runs entry of an ended attempt, through `checked`: its ID ("<ms>-<seq>", XADD's own, the
-- server's time as the entry is added), or nil and an error reply for a :runs of another type
-- (nothing written). The ID is the attempt's end: the entry carries no `ended_at` (its :results
-- member does), and no `kind` for a scheduled run (absent means scheduled, as in the member):
-- 35 bytes less per run of history (docs/store-format.md, ":runs stream entries").
-- Nor `runner` and `claimed_at`: the member has them, and readers pair an entry with its member by
-- slot, attempt and token (another 20-odd bytes a run).
local function add_run_entry(slot, run, status)
  if run.kind == 'manual' then
    return checked(4, 'XADD', KEYS[4], '*', 'slot', slot, 'attempt', run.attempt, 'token', run.token,
      'status', status, 'kind', 'manual')
  end
  return checked(4, 'XADD', KEYS[4], '*', 'slot', slot, 'attempt', run.attempt, 'token', run.token,
    'status', status)
end

-- The milliseconds of a stream entry ID, as text.
local function id_ms(id)
  return string.sub(id, 1, string.find(id, '-', 1, true) - 1)
end

-- Records the end of one attempt: an entry in the runs stream and a member in the results zset.
-- result_json is JSON text validated by the client, or 'null'. For callers that checked the types
-- of :runs and :results first.
local function record_attempt(slot, run, status, ended_at, result_json)
  add_run_entry(slot, run, status)
  redis.call('ZADD', KEYS[5], slot, result_member(run, status, ended_at, result_json))
end

-- What the job's claimants recorded in KEYS[6] (both fields optional, integers in ms):
--   protect_ms   the longest time after its slot that any claimant may still claim a run (max-late +
--                catch-up + lease x attempts): trimming must keep every run that young.
--   trimmed_to   the newest slot trimming ever removed: a run at or before it may have run already and
--                lost its state, so a claim of it is refused (answered done, status trimmed).
--   fence        the last fencing token a won claim was given (claim.lua): the next is one more.
-- A claim raises protect_ms to its own keep_ms, so one host's `run --catch-up 2h` protects runs from
-- every other host's trimming and from `anarchon trim`.
-- Every field is checked before it is used: garbage written by hand (a fraction, an exponent, text,
-- a trim horizon in the future, which would make every claim answer trimmed) is refused naming the
-- field, and nothing is written. Returns protect, stored protect, trimmed_to and the pause fields,
-- or nil and an error reply.
local JOB_LIMITS = {'protect_ms', 'trimmed_to', 'paused_at', 'paused_until', 'resumed_at',
                    'compacted_to', 'first_seen', 'fence'}
local function read_job_limits(keep_ms, now)
  local v, err = checked(6, 'HMGET', KEYS[6], unpack(JOB_LIMITS))
  if not v then return nil, err end
  -- Each present field converted once, checked as it is (a whole number: digits alone, so no
  -- sign to test after converting). Absent fields cost nothing: most jobs have no pause.
  local trimmed_text = v[2]
  for i = 1, #JOB_LIMITS do
    local text = v[i]
    if text then
      if #text > 16 or not string.find(text, '^%d+$') then
        return nil, corrupt(KEYS[6], 'field ' .. JOB_LIMITS[i] .. ' is ' .. text .. ', not a whole number of ms')
      end
      v[i] = tonumber(text)
    end
  end
  if now and v[2] and v[2] > now then
    return nil, corrupt(KEYS[6], 'field trimmed_to is ' .. trimmed_text ..
      ', a slot after the server\'s time ' .. now)
  end
  local stored = v[1] or nil
  local protect = keep_ms
  if stored and stored > protect then protect = stored end
  return protect, stored, v[2] or nil, {v[3] or nil, v[4] or nil, v[5] or nil},
    {compacted_to = v[6] or nil, first_seen = v[7] or nil, fence = v[8] or 0}
end

-- Plans the compaction of ended runs: their state keeps only `status`, which is all a claim that
-- follows the seed's flowchart reads of an ended run ("finished -> done"), for as long as the
-- history keeps them; the attempt's facts are its :results member. Any ended run, however recent:
-- only builds before this one needed the other fields of an ended run a late claim could still ask
-- for (they checked them before answering done), and keeping them for keep-claimable cost about
-- 45 bytes per run of history (bench/formats.py). Walks :slots from the job's `compacted_to`
-- (oldest first), at most `budget` runs, and stops at a run in progress (compacted once it has
-- ended and a later claim walks again). Reads only, validating what it reads; returns the slots to
-- compact, or nil and an error reply.
local function plan_compaction(now, compacted_to, budget, in_progress)
  local from = compacted_to and ('(' .. compacted_to) or '-inf'
  local page = redis.call('ZRANGEBYSCORE', KEYS[3], from, '(' .. now, 'LIMIT', 0, budget)
  local planned = {}
  for _, s in ipairs(page) do
    local e = validate_slot_member(KEYS[3], s)
    if e then return nil, e end
    if in_progress[s] then break end
    planned[#planned + 1] = s
  end
  return planned
end

local function apply_compaction(planned)
  if #planned == 0 then return end
  local names, n = {}, 0
  for _, s in ipairs(planned) do
    local prefix = s .. ':'
    for i = 1, #COMPACT_DROPS do names[n + i] = prefix .. COMPACT_DROPS[i] end
    n = n + #COMPACT_DROPS
  end
  redis.call('HDEL', KEYS[1], unpack(names))
  forget_fences(planned)
  redis.call('HSET', KEYS[6], 'compacted_to', planned[#planned])
end

-- A field and a value that exist only inside one script (prefer_hashtable): the field is no
-- `<slot>:<attribute>` name, and it is deleted before the script ends, so no reader, replica or AOF
-- ever sees it (a script's writes replicate as one transaction). The value is longer than any
-- server's hash-max-listpack-value (default 64 bytes; the string library is not
-- there while a function library loads, hence the literal).
local WIDE_FIELD = 'anarchon:encoding'
local WIDE_64 = '----------------------------------------------------------------'
local WIDE_VALUE = WIDE_64 .. WIDE_64 .. WIDE_64 .. WIDE_64 .. WIDE_64 .. WIDE_64 .. WIDE_64 .. WIDE_64

-- Keeps :state in Redis's hashtable encoding once it holds many fields. Below
-- hash-max-listpack-entries (128 by default) Redis keeps a hash as a listpack, where every field a
-- script reads or writes is a linear scan of the whole hash: about 25 times a hashtable's lookup
-- at a hundred runs of history, in every claim and finish (bench/floor.sh). A hash never goes back
-- to a listpack once converted (until the server reloads it from a dump, when the next history
-- claim converts it again), and writing one value too long for a listpack converts it; the
-- field is deleted at once. Readers see the same fields and values (an encoding is the server's
-- business, not the layout's); the hash costs about 55 bytes more per field. Small hashes stay
-- listpacks: a scan of a few dozen fields costs less than the hashtable's memory.
-- Called by claims that do history work (claim.lua), so its cost (one OBJECT ENCODING) is paid by
-- one claim in every 1% of the history size.
-- OBJECT goes through pcall: it comes after the claim's writes, and a user whose ACL denies it
-- (it is no command the layout needs) must still get the claim's answer; the hash then stays as it
-- is.
local function prefer_hashtable()
  local encoding = redis.pcall('OBJECT', 'ENCODING', KEYS[1])
  if encoding ~= 'listpack' and encoding ~= 'ziplist' then return end
  if redis.call('HLEN', KEYS[1]) < 64 then return end
  redis.call('HSET', KEYS[1], WIDE_FIELD, WIDE_VALUE)
  redis.call('HDEL', KEYS[1], WIDE_FIELD)
end

-- Ends a run in progress: its attempt recorded with `status` and `result_json`, its state ended,
-- out of :active. Its other fields stay until the claim horizon (plan_compaction). For callers
-- that checked the types of :active, :runs and :results first. (A released run's caller also
-- removes its mark: lua/lease/released.lua.)
local function end_run(slot, run, status, now, result_json)
  record_attempt(slot, run, status, now, result_json)
  redis.call('HSET', KEYS[1], field(slot, 'status'), status)
  redis.call('SREM', KEYS[2], slot)
end

-- end_run for finish, which checks no key with TYPE and reads no TIME: the attempt ends when its
-- :runs entry is added, and the entry's ID (the server's time, as XADD takes it) is its `ended_at`
-- (one command less in every finish). Each write to a key it has not read goes through `checked`,
-- first the stream, then the zset, then the set, and one that meets a key of another type undoes
-- the writes before it (the entry, by its ID; a zset member: exactly) and returns the error reply,
-- so nothing is written. Returns the attempt's end (ms, text), or nil and an error reply.
local function finish_run(slot, run, status, result_json)
  local id, err = add_run_entry(slot, run, status)
  if not id then return nil, err end
  local ended_at = id_ms(id)
  local member = result_member(run, status, ended_at, result_json)
  local added
  added, err = checked(5, 'ZADD', KEYS[5], slot, member)
  if not added then
    redis.call('XDEL', KEYS[4], id)
    return nil, err
  end
  local removed
  removed, err = checked(2, 'SREM', KEYS[2], slot)
  if not removed then
    if added == 1 then redis.call('ZREM', KEYS[5], member) end
    redis.call('XDEL', KEYS[4], id)
    return nil, err
  end
  redis.call('HSET', KEYS[1], field(slot, 'status'), status)
  return ended_at
end

-- For a claim under --overlap forbid that would take over `slot` (its lease expired): another run
-- of the job in progress under a live lease, the newest if several. A takeover is a run of the job
-- like any other: it must not run beside a newer slot's run, which the seed's flowchart (overlap
-- checked for new runs only) would let it do. Returns that run's slot and the run, false when
-- there is none, or nil and an error reply.
local function live_other_run(slot, now)
  local newest, newest_run = nil, nil
  local members, err = checked(2, 'SMEMBERS', KEYS[2])
  if not members then return nil, err end
  for _, other in ipairs(members) do
    err = validate_slot_member(KEYS[2], other)
    if err then return nil, err end
    if other ~= slot then
      local o
      o, err = read_valid_run(other)
      if not o then return nil, err end
      if o.status == 'running' and tonumber(o.lease_end) > now and
          (not newest or tonumber(other) > tonumber(newest)) then
        newest, newest_run = other, o
      end
    end
  end
  return newest or false, newest_run
end

-- Plans trimming: history_size runs are kept, and with ttl_ms > 0 runs older than ttl_ms go too.
-- Never trims a run still in progress (in the active set) or one younger than keep_ms, which a late
-- claim could still ask for: trimming its state would let that claim run it twice. Runs that must
-- stay do not count against the trimming, so a job keeps history_size runs or its protected ones.
-- `adding` counts a run the caller is about to create, `already` runs an earlier call of the same
-- dry run planned. Walks the oldest runs first, after `cursor` ('-inf' or '(<slot>'), and looks at
-- no more than `budget` runs, so one call stays short; the caller goes on from the returned cursor.
-- Reads only, and validates what it reads. Returns the slots to trim, whether the walk is complete,
-- and the cursor to go on from; or nil and an error reply.
local function plan_trim(now, history_size, ttl_ms, keep_ms, budget, adding, cursor, already, in_progress)
  local count, err = checked(3, 'ZCARD', KEYS[3])
  if not count then return nil, err end
  local need = count + adding - history_size - already
  local expire_before = nil
  if ttl_ms > 0 then expire_before = now - ttl_ms end
  local trimmed = {}
  if need <= 0 and not expire_before then return trimmed, true, cursor end
  local examined = 0
  while examined < budget do
    local page = redis.call('ZRANGEBYSCORE', KEYS[3], cursor, '(' .. (now - keep_ms), 'LIMIT', 0,
      math.min(100, budget - examined))
    if #page == 0 then return trimmed, true, cursor end
    -- The cursor is made text once per page, from the last member examined (not per member).
    local last = nil
    for _, s in ipairs(page) do
      local e = validate_slot_member(KEYS[3], s)
      if e then return nil, e end
      local expired = expire_before ~= nil and tonumber(s) < expire_before
      -- Oldest first: once no more are needed and this one has not expired, none later has.
      if need <= 0 and not expired then
        if last then cursor = '(' .. last end
        return trimmed, true, cursor
      end
      examined = examined + 1
      last = s
      local running
      if in_progress then running = in_progress[s] else running = redis.call('SISMEMBER', KEYS[2], s) == 1 end
      if running then
        trimmed.gap = true
      else
        trimmed[#trimmed + 1] = s
        need = need - 1
      end
    end
    if last then cursor = '(' .. last end
  end
  return trimmed, false, cursor
end

-- Deletes the planned runs: their state fields, :slots member and :results members, raises the
-- job's trim horizon (KEYS[6] trimmed_to), then trims the :runs stream to as many entries as
-- :results keeps members, dropping the oldest. The stream is in order of the attempts' ends and the
-- trimmed runs are the oldest, so its head holds their entries; XTRIM frees whole nodes at once,
-- where deleting entries one by one from a stream's head costs a scan of the head node per entry.
local function apply_trim(trimmed, horizon)
  if #trimmed == 0 then return end
  local names, n = {}, 0
  local newest = nil
  for _, s in ipairs(trimmed) do
    local prefix = s .. ':'
    for i = 1, #RUN_FIELDS do names[n + i] = prefix .. RUN_FIELDS[i] end
    n = n + #RUN_FIELDS
    if not newest or tonumber(s) > newest then newest = tonumber(s) end
  end
  redis.call('HDEL', KEYS[1], unpack(names))
  forget_fences(trimmed)
  redis.call('ZREM', KEYS[3], unpack(trimmed))
  -- The trimmed slots are the oldest in order; with no run in progress among them, their members
  -- are one range of :results (a run in progress may have members of earlier attempts).
  if trimmed.gap then
    for _, s in ipairs(trimmed) do redis.call('ZREMRANGEBYSCORE', KEYS[5], s, s) end
  else
    redis.call('ZREMRANGEBYSCORE', KEYS[5], trimmed[1], trimmed[#trimmed])
  end
  redis.call('XTRIM', KEYS[4], 'MAXLEN', redis.call('ZCARD', KEYS[5]))
  -- The horizon as the caller read it (claim: read_job_limits, checked), else read here.
  if horizon == nil then horizon = tonumber(redis.call('HGET', KEYS[6], 'trimmed_to')) end
  if not horizon or newest > horizon then
    redis.call('HSET', KEYS[6], 'trimmed_to', newest)
  end
end
