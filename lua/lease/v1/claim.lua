-- claim(job, slot, token): decides who runs one scheduled run (docs/store-format.md, "claim").
-- KEYS: 1-5 as in lib.lua, 6 job (hash)
-- ARGV: 1 slot (ms), 2 token, 3 runner, 4 lease_ms, 5 max_attempts, 6 allow_overlap (0|1),
--       7 kind (scheduled|manual), 8 history_size, 9 history_ttl_ms (0 = none), 10 keep_ms,
--       11 continues (1: the run of this slot is in progress under an earlier name of the job, so
--       a pause refuses it no more than a takeover; absent or 0 otherwise), 12 owed_ms (under
--       forbid or buffer: an older run whose holder is gone, with attempts left, whose slot is at
--       most this old, is owed its takeover first: answered overlap, never superseded; absent or
--       0: the newer run supersedes it, as --overlap replace does)
-- Reply: {outcome, attempt, lease_end, runner, status, server_now, other_slot, fence}, all strings;
--   outcome is won | overlap | done | running | paused. For overlap the other fields describe the
--   other run in progress (older, or newer for a late claim), and three empty strings and the
--   other run's started_at (its first claim) follow: a run first claimed after this slot was due
--   is one a host catching up put ahead of it (src/runner/mod.rs, `ahead_of`). For a takeover
--   superseded by a newer run (done, interrupted), other_slot is its slot. fence: a won attempt's
--   fencing token, one more than the job's last (:job fence), whatever the path (new run, manual
--   run, takeover): strictly rising across every won claim of the job; empty otherwise.
-- :state, :job, and for a new run :active, are read first, through `checked` (lib.lua); a new run
-- reads :slots when it does history work, else :slots is its first write, through `checked` too.
-- The keys a path writes without reading are checked with TYPE on that path, before its first write.
local err
local slot, token, runner = ARGV[1], ARGV[2], ARGV[3]
local lease_ms, max_attempts = tonumber(ARGV[4]), tonumber(ARGV[5])
local allow_overlap, kind = ARGV[6] == '1', ARGV[7]
local continues = ARGV[11] == '1'
local owed_ms = tonumber(ARGV[12]) or 0
local now, micros = server_now_ms()
local lease_end = now + lease_ms
-- The two times a won claim writes and answers, as text once: Lua turns a number of 13 digits
-- into text by a floating-point printf (tostring, or a number passed to redis.call), about 1.5 µs
-- each on a loaded VM, and a new run's claim would do it five times (bench/floor.sh).
local now_text, lease_end_text = string.format('%d', now), string.format('%d', lease_end)
local keep_ms, stored_protect, trimmed_to, pause, marks = read_job_limits(tonumber(ARGV[10]), now)
if not keep_ms then return stored_protect end

local function reply(outcome, attempt, end_ms, who, status, other, fence)
  return {outcome, tostring(attempt or ''), tostring(end_ms or ''), who or '', status or '', now_text, other or '',
    fence and string.format('%d', fence) or ''}
end

-- The fencing token of a won attempt: the job's last plus one, recorded in :job as the job's last
-- and as the run's (fence_field: a lost reply's repeat answers it again). (:job was read and
-- checked by read_job_limits.)
local fence = marks.fence + 1

-- The overlap answer: the other run in progress, and when it was first claimed (read only here:
-- started_at is no field the other paths need, and an overlap is the rare answer).
local function overlap_reply(other, o)
  local r = reply('overlap', o.attempt, o.lease_end, o.runner, o.status, other)
  local started = redis.call('HGET', KEYS[1], field(other, 'started_at'))
  r[9], r[10], r[11] = '', '', started or ''
  return r
end

-- Ends a run in progress whose lease lapsed and that nobody may take over (abandoned, or
-- superseded by a newer run under forbid): its attempt recorded `interrupted` (`extra`: more
-- result fields), or, when that attempt ended for a retry (retry.lua) that nobody took, the retry
-- recorded as not run. Either way the run ends `interrupted`.
local function end_lapsed(other, o, extra)
  if pending_retry(KEYS[6], other, o.attempt) then
    end_run(other, retry_not_run(o, now), 'interrupted', now, '{"reason":"retry not run"' .. (extra or '') .. '}')
    forget_retry(KEYS[6], other, 2)
    return 'interrupted'
  end
  end_run(other, o, 'interrupted', now, expired_result(KEYS[6], other, o.attempt, extra))
  forget_retry(KEYS[6], other, o.attempt)
  return 'interrupted'
end

-- The slot's status first, alone: a new run (the common case of a claim that reaches the script,
-- since a claim's look answers the losers) has none, and its other fields are then not read at all
-- (a run with no status has no state: lib.lua validate_run). A run with state is read whole below.
local status
status, err = checked(1, 'HGET', KEYS[1], field(slot, 'status'))
if status == nil then return err end

if not status then
  -- Trimming removed runs up to trimmed_to: this one may have run already, so it must not run again.
  if trimmed_to and tonumber(slot) <= trimmed_to then
    return reply('done', nil, nil, '', 'trimmed', '')
  end
  if kind == 'scheduled' and not continues then
    -- Paused (lua/lease/pause.lua): answered paused (lease_end: when the pause ends, empty until resumed).
    local is_paused, ends = paused(tonumber(slot), now, pause[1], pause[2], pause[3])
    if is_paused then return reply('paused', nil, ends, '', 'paused', '') end
  end
  -- The other runs in progress: end those nobody can take over any more, and look for an overlap.
  -- A run is abandoned when its lease expired more than one lease ago (a waiting backup takes over
  -- within a second of the expiry) and either its attempts are used up or it is older than any claim
  -- could still ask for. Without this it would stay `running` for ever.
  -- Everything is read and checked before the first write.
  local slot_ms = tonumber(slot)
  local others, in_progress = NOTHING, NOTHING
  local members
  members, err = checked(2, 'SMEMBERS', KEYS[2])
  if not members then return err end
  if #members > 0 then others, in_progress = {}, {} end
  for _, other in ipairs(members) do
    err = validate_slot_member(KEYS[2], other)
    if err then return err end
    in_progress[other] = true
    if other ~= slot then
      local o
      o, err = read_valid_run(other)
      if not o then return err end
      if o.status == 'running' then
        -- A released run whose lease has expired ends now, as its release asked.
        local mark = nil
        if tonumber(o.lease_end) <= now then
          mark, err = release_mark(KEYS[6], other)
          if err then return err end
        end
        others[#others + 1] = {other, o, mark}
      end
    end
  end
  -- History is trimmed, and old ended runs compacted, in batches: about one claim of a new run in
  -- every 1% of the history size (at most 16, at least 1) does each, for all that is due at once
  -- (up to twice that many runs, at least 16). Which claims: those whose server time falls on a
  -- multiple of the batch in microseconds, a draw as good as random that costs no command (the
  -- ZCARD of :slots that paced this before cost every claim one; bench/formats.py). The history
  -- may be over its size by a few batches in between; with a TTL every claim looks for expired runs.
  local history_size, ttl_ms = tonumber(ARGV[8]), tonumber(ARGV[9])
  local batch = math.max(1, math.min(16, math.floor(history_size / 100)))
  local due = micros % batch == 0
  local budget = math.max(16, 2 * batch)
  local trimmed, compacted = NOTHING, NOTHING
  if ttl_ms > 0 or due then
    trimmed, err = plan_trim(now, history_size, ttl_ms, keep_ms, budget, 1, '-inf', 0, in_progress)
    if not trimmed then return err end
  end
  if due then
    compacted, err = plan_compaction(now, marks.compacted_to, budget, in_progress)
    if not compacted then return err end
  end
  -- :runs and :results are written only when runs end or go (most new runs write neither).
  if #trimmed > 0 or #others > 0 then
    err = key_type_error(4) or key_type_error(5)
    if err then return err end
  end
  -- :slots, unread when this claim does no history work, is the new run's first write (below),
  -- through `checked`; when other runs may end before it, its type is checked here.
  if #others > 0 and not (ttl_ms > 0 or due) then
    err = key_type_error(3)
    if err then return err end
  end

  local overlapping = nil
  local overtaken = {}
  for _, pair in ipairs(others) do
    local other, o, mark = pair[1], pair[2], pair[3]
    local other_ms, o_end = tonumber(other), tonumber(o.lease_end)
    -- A retry that fell due holds the job a lease longer: the hosts standing by for it take it
    -- over within moments of its time, and a newer run must not supersede it meanwhile.
    if o_end <= now and not mark and pending_retry(KEYS[6], other, o.attempt) then
      o_end = o_end + lease_ms
    end
    if mark then
      end_run(other, o, mark.status, now, released_result(mark, nil))
      forget_release(KEYS[6], other)
    elseif o_end + lease_ms < now and (tonumber(o.attempt) >= attempts_allowed(KEYS[6], other, o.attempt, max_attempts)
        or other_ms < now - keep_ms) then
      end_lapsed(other, o, nil)
    elseif not allow_overlap and o_end <= now and other_ms < slot_ms
        and not (owed_ms > 0 and other_ms >= now - owed_ms
          and tonumber(o.attempt) < attempts_allowed(KEYS[6], other, o.attempt, max_attempts)) then
      overtaken[#overtaken + 1] = pair
    elseif (o_end > now or (not allow_overlap and other_ms < slot_ms))
        and (not overlapping or other_ms < tonumber(overlapping[1])) then
      -- (An older run whose holder is gone, owed its takeover, holds the job as a live one does:
      -- the claimant takes it over first, src/runner/mod.rs `owed_takeover`.)
      -- Older or newer: under forbid a new run never starts beside a live one. (A newer one is
      -- live when this claim comes late: a host that stalled, a buffered or backfilled slot.)
      overlapping = pair
    end
  end
  if overlapping and not allow_overlap then
    local other, o = overlapping[1], overlapping[2]
    return overlap_reply(other, o)
  end
  -- When the job's first claim reached the store (run --catch-up never catches up before it),
  -- once; a job from before this field counts from its oldest run. Read before :slots has this run.
  local first_seen = nil
  if not marks.first_seen then
    local oldest
    oldest, err = checked(3, 'ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    if not oldest then return err end
    first_seen = now
    if oldest[2] and tonumber(oldest[2]) < first_seen then first_seen = tonumber(oldest[2]) end
  end
  -- The first write of a new run (a :slots of another type is refused here, nothing written).
  local added
  added, err = checked(3, 'ZADD', KEYS[3], slot, slot)
  if not added then return err end
  -- Older runs whose holder is gone, overtaken by this one as it wins: under forbid a takeover of
  -- them beside this run would be refused from now on (superseded), so they end here, rather than
  -- stay running with nobody to finish them.
  for _, pair in ipairs(overtaken) do
    end_lapsed(pair[1], pair[2], ',"superseded_by":' .. slot)
  end
  -- A scheduled run's kind is not written: absent means scheduled to every format 1 reader.
  -- (Two calls rather than a table of fields for unpack: one allocation less on every new run.)
  local p = slot .. ':'
  if kind == 'manual' then
    redis.call('HSET', KEYS[1], p .. 'status', 'running', p .. 'attempt', 1, p .. 'token', token,
      p .. 'runner', runner, p .. 'lease_end', lease_end_text, p .. 'claimed_at', now_text, p .. 'started_at', now_text,
      p .. 'kind', kind)
  else
    redis.call('HSET', KEYS[1], p .. 'status', 'running', p .. 'attempt', 1, p .. 'token', token,
      p .. 'runner', runner, p .. 'lease_end', lease_end_text, p .. 'claimed_at', now_text, p .. 'started_at', now_text)
  end
  if first_seen then
    redis.call('HSET', KEYS[6], 'fence', fence, fence_field(slot), fence, 'first_seen', first_seen)
  else
    redis.call('HSET', KEYS[6], 'fence', fence, fence_field(slot), fence)
  end
  redis.call('SADD', KEYS[2], slot)
  -- Record how late this claimant may still claim, so every other trimmer keeps such runs.
  if not stored_protect or keep_ms > stored_protect then
    redis.call('HSET', KEYS[6], 'protect_ms', keep_ms)
  end
  apply_trim(trimmed, trimmed_to or false)
  apply_compaction(compacted)
  if due then prefer_hashtable() end
  return reply('won', '1', lease_end_text, runner, 'running', '', fence)
end

local run
run, err = read_valid_run(slot)
if not run then return err end

if run.status ~= 'running' then
  return reply('done', run.attempt, run.lease_end, run.runner, run.status, '')
end

local attempt, current_end = tonumber(run.attempt), tonumber(run.lease_end)

-- Held by another token under a live lease: the answer of every losing host, given before
-- anything else is read (a release mark changes nothing while the lease lives).
if run.token ~= token and current_end > now then
  return reply('running', attempt, current_end, run.runner, 'running', '')
end

-- Every path from here may write :active, :runs and :results.
err = check_written_types()
if err then return err end

-- Released by an operator (release_mark): while its lease lived the holder may still have been
-- stopping its command, so the run stayed held (above); now that the lease has expired, or the
-- holder itself asks again, it ends as the release said.
local mark
mark, err = release_mark(KEYS[6], slot)
if err then return err end
if mark and (run.token == token or current_end <= now) then
  end_run(slot, run, mark.status, now, released_result(mark, nil))
  forget_release(KEYS[6], slot)
  return reply('done', attempt, current_end, run.runner, mark.status, '')
end

-- The same token again: the caller's earlier claim was applied but its reply was lost. It still
-- holds the run; answer won again (and renew the lease, never shortening it) instead of leaving a
-- run that nobody runs until its lease expires.
if run.token == token then
  local renewed = math.max(current_end, lease_end)
  -- Its fence as first given (a run claimed by a release before fences has none: empty).
  local given = redis.call('HGET', KEYS[6], fence_field(slot))
  if given and not is_int(given) then
    return corrupt(KEYS[6], 'field ' .. fence_field(slot) .. ' is ' .. given .. ', not a whole number')
  end
  redis.call('HSET', KEYS[1], field(slot, 'lease_end'), renewed)
  return reply('won', attempt, renewed, run.runner, 'running', '', given)
end

-- The lease expired: its holder is gone. Under --overlap forbid a takeover is checked like a new
-- run: beside an older run with a live lease it answers overlap (nothing written); behind a newer
-- one, already claimed while this slot's lease lapsed, the slot is superseded and ends interrupted.
if not allow_overlap then
  local other, o = live_other_run(slot, now)
  if other == nil then return o end
  if other and tonumber(other) > tonumber(slot) then
    local ended = end_lapsed(slot, run, ',"superseded_by":' .. other)
    return reply('done', attempt, current_end, run.runner, ended, other)
  elseif other then
    return overlap_reply(other, o)
  end
end

-- Its attempt ends as interrupted either way (handed over, when its holder said so; a hand-over
-- spends no attempt: attempts_allowed), unless it ended for a retry: its finish recorded it, and
-- the retry is this takeover.
local allowed = attempts_allowed(KEYS[6], slot, attempt, max_attempts)
if attempt >= allowed then
  local ended = end_lapsed(slot, run, nil)
  return reply('done', attempt, current_end, run.runner, ended, '')
end
if not pending_retry(KEYS[6], slot, attempt) then
  record_attempt(slot, run, 'interrupted', now, expired_result(KEYS[6], slot, attempt))
end
redis.call('HSET', KEYS[1],
  field(slot, 'attempt'), attempt + 1, field(slot, 'token'), token, field(slot, 'runner'), runner,
  field(slot, 'lease_end'), lease_end_text, field(slot, 'claimed_at'), now_text)
redis.call('HSET', KEYS[6], 'fence', fence, fence_field(slot), fence)
return reply('won', attempt + 1, lease_end_text, runner, 'running', '', fence)
