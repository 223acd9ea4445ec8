-- skip(job, slot), store format 2: records a scheduled run that `run --catch-up` decided not to run
-- (--catch-up-policy latest, or more missed runs than --catch-up-max) as skipped, once: no later
-- claim runs it (a claim answers done, skipped), and history and health show it. Only a slot that
-- nobody claimed: a run in progress or ended is answered as it is, and a paused slot is left alone
-- (the pause skipped it already; it is not a missed run).
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- ARGV: 1 slot, 2 runner (the host that decided), 3 reason
-- Reply: {outcome, status, server_now}; outcome is skipped, running, done or paused.
local slot, runner, reason = ARGV[1], ARGV[2], ARGV[3]
local job, err = read_job(0)
if not job then return err end
err = ensure_format_2(job, true)
if err then return err end
local now = server_now_ms()
local run
run, err = live_run(slot)
if run == nil then return err end
if run then return {'running', 'running', int(now)} end
local final
final, err = ended_run(slot)
if err then return err end
if final then return {'done', final.status, int(now)} end
if job.trimmed_to and tonumber(slot) <= job.trimmed_to then return {'done', 'trimmed', int(now)} end
if paused(tonumber(slot), now, job.paused_at, job.paused_until, job.resumed_at) then
  return {'paused', 'paused', int(now)}
end
-- Attempt 0: nobody ran it. No attempt has a token, but members of :results must differ, and
-- skips recorded in the same millisecond would not: the token names the slot.
err = record_attempt(slot, {attempt = 0, token = 'skip:' .. slot, runner = runner, claimed_at = now,
  kind = 'scheduled'}, 'skipped', now, cjson.encode({reason = reason}))
if err then return err end
return {'skipped', 'skipped', int(now)}
