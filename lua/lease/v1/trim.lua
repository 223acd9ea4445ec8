-- trim(job): history trimming on demand (`anarchon trim`), with exactly the rules claim applies.
-- KEYS: 1-5 as in lib.lua, 6 job (hash)
-- ARGV: 1 history_size, 2 history_ttl_ms (0 = none), 3 keep_ms, 4 budget (runs looked at),
--       5 dry_run (0|1), 6 cursor ('-inf', or '(<slot>' to go on after a slot: dry runs only),
--       7 runs an earlier call of this dry run planned
-- Reply: {complete (0|1), cursor, slot, slot, ...}: the slots trimmed (with dry_run: that would be;
--   nothing is written). Not complete: call again (a dry run from the cursor).
local err = check_key_types(6)
if err then return err end
-- Never less protection than the job's claimants recorded (the client refuses a shorter --protect).
local keep_ms, job_err = read_job_limits(tonumber(ARGV[3]))
if not keep_ms then return job_err end
local trimmed, complete, cursor = plan_trim(server_now_ms(), tonumber(ARGV[1]), tonumber(ARGV[2]),
  keep_ms, tonumber(ARGV[4]), 0, ARGV[6], tonumber(ARGV[7]))
if not trimmed then return complete end
if ARGV[5] ~= '1' then apply_trim(trimmed) end
local reply = {complete and '1' or '0', cursor}
for _, s in ipairs(trimmed) do reply[#reply + 1] = s end
return reply
