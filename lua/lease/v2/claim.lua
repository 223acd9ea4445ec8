-- claim(job, slot, token), store format 2: decides who runs one scheduled run.
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- ARGV: 1 slot (ms), 2 token, 3 runner, 4 lease_ms, 5 max_attempts, 6 allow_overlap (0|1),
--       7 kind (scheduled|manual), 8 history_size, 9 history_ttl_ms (0 = none), 10 keep_ms,
--       11 continues (1: the run of this slot is in progress under an earlier name of the job, so
--       a pause refuses it no more than a takeover; absent or 0 otherwise), 12 owed_ms (under
--       forbid or buffer: an older run whose holder is gone, with attempts left, whose slot is at
--       most this old, is owed its takeover first: answered overlap, never superseded; absent or
--       0: the newer run supersedes it, as --overlap replace does)
-- Reply: {outcome, attempt, lease_end, runner, status, server_now, other_slot, fence}, all strings;
--   outcome is won | overlap | done | running | paused. For overlap the other fields describe the
--   other run in progress (older, or newer for a late claim), and two empty strings and the
--   other run's started_at follow; for a takeover superseded by a newer run (done, interrupted),
--   other_slot is its slot. fence: the won attempt's fencing token (lib.lua next_fence), empty
--   otherwise.
local slot, token, runner = ARGV[1], ARGV[2], ARGV[3]
local lease_ms, max_attempts = tonumber(ARGV[4]), tonumber(ARGV[5])
local allow_overlap, kind = ARGV[6] == '1', ARGV[7]
local continues = ARGV[11] == '1'
local owed_ms = tonumber(ARGV[12]) or 0

local now = server_now_ms()
local lease_end = now + lease_ms

-- The common answer first: the slot is in progress under another token and its lease is live
-- (a host of a herd that raced past its look, a writer that does not look). Decided from :live
-- alone, before :job is read; a slot in :live means the job is in format 2 already. Runs in
-- progress are few (one per job unless --overlap allow), so one HGETALL answers both this and,
-- below, which other runs are in progress. Everything else (a new run, an ended one, our own
-- retry, an expired lease) goes on below.
-- Ends a run in progress whose lease lapsed and that nobody may take over (abandoned, or
-- superseded by a newer run under forbid): its attempt recorded `interrupted` (`extra`: more
-- result fields), or, when that attempt ended for a retry (retry.lua) that nobody took, the retry
-- recorded as not run. Either way the run ends `interrupted`. Returns the status, or nil and an
-- error reply.
local function end_lapsed(other, o, extra)
  if pending_retry(KEYS[3], other, o.attempt) then
    local err = end_live_run(other, retry_not_run(o, now), 'interrupted', now,
      '{"reason":"retry not run"' .. (extra or '') .. '}')
    if err then return nil, err end
    forget_retry(KEYS[3], other, 2)
    return 'interrupted'
  end
  local err = end_live_run(other, o, 'interrupted', now, expired_result(KEYS[3], other, o.attempt, extra))
  if err then return nil, err end
  forget_retry(KEYS[3], other, o.attempt)
  return 'interrupted'
end

local live, live_count = live_runs()
if not live then return live_count end
local held = live[slot]
if held and held.token ~= token and held.lease_end > now then
  return {'running', int(held.attempt), int(held.lease_end), held.runner, 'running', int(now), '', ''}
end

local job, err = read_job(tonumber(ARGV[10]), now)
if not job then return err end
if job.format ~= '2' then
  err = ensure_format_2(job, true)
  if err then return err end
  -- A format 1 job's runs in progress have just moved to :live.
  live, live_count = live_runs()
  if not live then return live_count end
end
local keep_ms = job.protect

local function reply(outcome, attempt, end_ms, who, status, other, fence)
  local a, e, f = '', '', ''
  if attempt then a = int(attempt) end
  if end_ms then e = int(end_ms) end
  if fence then f = int(fence) end
  return {outcome, a, e, who or '', status or '', int(now), other or '', f}
end

-- The overlap answer: the other run in progress and, after two empty strings, when it was first
-- claimed (a run first claimed after this slot was due is one a host catching up put ahead of it).
local function overlap_reply(other, o)
  local r = reply('overlap', o.attempt, o.lease_end, o.runner, 'running', other)
  r[9], r[10], r[11] = '', '', int(o.started_at)
  return r
end

local run = live[slot]

if not run then
  -- Not in progress: an ended run has results, and a trimmed one is behind the trim horizon.
  local final
  final, err = ended_run(slot)
  if err then return err end
  if final then return reply('done', final.attempt, nil, final.runner, final.status, '') end
  if job.trimmed_to and tonumber(slot) <= job.trimmed_to then
    return reply('done', nil, nil, '', 'trimmed', '')
  end
  if kind == 'scheduled' and not continues then
    -- Paused: answered paused (lease_end: when the pause ends, empty until resumed).
    local is_paused, ends = paused(tonumber(slot), now, job.paused_at, job.paused_until, job.resumed_at)
    if is_paused then return reply('paused', nil, ends, '', 'paused', '') end
  end
  -- A new run. The other runs in progress: end those nobody can take over any more, and look for
  -- an overlap. A run is abandoned when its lease expired more than one lease ago (a waiting backup
  -- takes over within a second of the expiry) and either its attempts are used up or it is older
  -- than any claim could still ask for. Everything is read and checked before the first write.
  -- History may go over its size by 1% (at most 16 runs) before a claim trims it back: only every
  -- `every`-th claim (by its fencing token) counts the history, and trims all of the excess. With
  -- a TTL every claim looks for expired runs (one read of the oldest).
  local history_size, ttl_ms = tonumber(ARGV[8]), tonumber(ARGV[9])
  local every = math.max(1, math.min(16, math.floor(history_size / 100)))
  local trimmed = NO_TRIM
  if ttl_ms > 0 or (job.fence + 1) % every == 0 then
    trimmed, err = plan_trim(now, history_size, ttl_ms, keep_ms, 16, 1, '-inf', 0, live, live_count)
    if not trimmed then return err end
  end

  local slot_ms = tonumber(slot)
  -- A released run whose lease has expired ends now, as its release asked (read before writing).
  local marks, overtaken = NOTHING, NOTHING
  if live_count > 0 then marks, overtaken = {}, {} end
  for other, o in pairs(live) do
    if o.lease_end <= now then
      local mark
      mark, err = release_mark(KEYS[3], other)
      if err then return err end
      marks[other] = mark
    end
  end
  local overlapping, overlapping_slot = nil, nil
  for other, o in pairs(live) do
    local other_ms, o_end = tonumber(other), o.lease_end
    -- A retry that fell due holds the job a lease longer: the hosts standing by for it take it
    -- over within moments of its time, and a newer run must not supersede it meanwhile.
    if o_end <= now and not marks[other] and pending_retry(KEYS[3], other, o.attempt) then
      o_end = o_end + lease_ms
    end
    if marks[other] then
      err = end_live_run(other, o, marks[other].status, now, released_result(marks[other], nil))
      if err then return err end
      forget_release(KEYS[3], other)
    elseif o_end + lease_ms < now and (o.attempt >= attempts_allowed(KEYS[3], other, o.attempt, max_attempts)
        or other_ms < now - keep_ms) then
      local _, failed = end_lapsed(other, o, nil)
      if failed then return failed end
    elseif not allow_overlap and o_end <= now and other_ms < slot_ms
        and not (owed_ms > 0 and other_ms >= now - owed_ms
          and o.attempt < attempts_allowed(KEYS[3], other, o.attempt, max_attempts)) then
      overtaken[#overtaken + 1] = other
    elseif (o_end > now or (not allow_overlap and other_ms < slot_ms))
        and (not overlapping_slot or other_ms < overlapping_slot) then
      -- (An older run whose holder is gone, owed its takeover, holds the job as a live one does:
      -- the claimant takes it over first, src/runner/mod.rs `owed_takeover`.)
      -- Older or newer: under forbid a new run never starts beside a live one. (A newer one is
      -- live when this claim comes late: a host that stalled, a buffered or backfilled slot.)
      overlapping, overlapping_slot = o, other_ms
    end
  end
  if overlapping and not allow_overlap then
    return overlap_reply(int(overlapping_slot), overlapping)
  end
  -- Older runs whose holder is gone, overtaken by this one as it wins: under forbid a takeover of
  -- them beside this run would be refused from now on (superseded), so they end here, rather than
  -- stay in :live with nobody to finish them.
  for _, other in ipairs(overtaken) do
    local _, failed = end_lapsed(other, live[other], ',"superseded_by":' .. slot)
    if failed then return failed end
  end
  local fence = next_fence()
  redis.call('HSET', KEYS[1], slot, encode_first_attempt(token, runner, lease_end, now, kind, lease_ms, fence))
  -- Record how late this claimant may still claim, so every other trimmer keeps such runs.
  if not job.stored_protect or keep_ms > job.stored_protect then
    redis.call('HSET', KEYS[3], 'protect_ms', int(keep_ms))
  end
  -- When the job was first seen, once: a job from before this field counts from its oldest run.
  if not job.first_seen then
    local first = now
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    if oldest[2] and tonumber(oldest[2]) < first then first = tonumber(oldest[2]) end
    for other in pairs(live) do
      if tonumber(other) < first then first = tonumber(other) end
    end
    redis.call('HSET', KEYS[3], 'first_seen', int(first))
  end
  apply_trim(trimmed, job.trimmed_to)
  return reply('won', 1, lease_end, runner, 'running', '', fence)
end

-- Released by an operator (lua/lease/released.lua): while its lease lives the holder may still be
-- stopping its command, so the run stays held (answered running below); once the lease has
-- expired, or the holder itself asks again, it ends as the release said.
local mark
mark, err = release_mark(KEYS[3], slot)
if err then return err end
if mark and (run.token == token or run.lease_end <= now) then
  err = end_live_run(slot, run, mark.status, now, released_result(mark, nil))
  if err then return err end
  forget_release(KEYS[3], slot)
  return reply('done', run.attempt, run.lease_end, run.runner, mark.status, '')
end

-- The same token again: the caller's earlier claim was applied but its reply was lost. It still
-- holds the run; answer won again (renewing the lease, never shortening it).
if run.token == token then
  run.lease_end = math.max(run.lease_end, lease_end)
  redis.call('HSET', KEYS[1], slot, encode_live(run))
  return reply('won', run.attempt, run.lease_end, run.runner, 'running', '', run.fence)
end

if run.lease_end > now then
  return reply('running', run.attempt, run.lease_end, run.runner, 'running', '')
end

-- The lease expired: its holder is gone. Under --overlap forbid a takeover is checked like a new
-- run: beside an older run with a live lease it answers overlap (nothing written); behind a newer
-- one, already claimed while this slot's lease lapsed, the slot is superseded and ends interrupted.
if not allow_overlap then
  local other, o = nil, nil
  for s2, r2 in pairs(live) do
    if s2 ~= slot and r2.lease_end > now and (not other or tonumber(s2) > tonumber(other)) then
      other, o = s2, r2
    end
  end
  if other and tonumber(other) > tonumber(slot) then
    local ended, failed = end_lapsed(slot, run, ',"superseded_by":' .. other)
    if not ended then return failed end
    return reply('done', run.attempt, run.lease_end, run.runner, ended, other)
  elseif other then
    return overlap_reply(other, o)
  end
end

-- Its attempt ends as interrupted either way (handed over, when its holder said so; a hand-over
-- spends no attempt: attempts_allowed), unless it ended for a retry: its finish recorded it, and
-- the retry is this takeover.
local allowed = attempts_allowed(KEYS[3], slot, run.attempt, max_attempts)
if run.attempt >= allowed then
  local ended, failed = end_lapsed(slot, run, nil)
  if not ended then return failed end
  return reply('done', run.attempt, run.lease_end, run.runner, ended, '')
end
if not pending_retry(KEYS[3], slot, run.attempt) then
  err = record_attempt(slot, run, 'interrupted', now, expired_result(KEYS[3], slot, run.attempt))
  if err then return err end
end
run.attempt, run.token, run.runner = run.attempt + 1, token, runner
run.lease_end, run.claimed_at, run.lease_ms = lease_end, now, lease_ms
run.fence = next_fence()
redis.call('HSET', KEYS[1], slot, encode_live(run))
return reply('won', run.attempt, lease_end, runner, 'running', '', run.fence)
