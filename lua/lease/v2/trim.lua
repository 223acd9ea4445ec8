-- trim(job), store format 2: history trimming on demand (`anarchon trim`), with the claim's rules.
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- ARGV: 1 history_size, 2 history_ttl_ms (0 = none), 3 keep_ms, 4 budget (members looked at),
--       5 dry_run (0|1), 6 cursor ('-inf', or '(<slot>' to go on after a slot: dry runs only),
--       7 entries an earlier call of this dry run planned
-- Reply: {complete (0|1), cursor, slot, slot, ...}: the slots trimmed (with dry_run: that would be).
local dry_run = ARGV[5] == '1'
local job, err = read_job(tonumber(ARGV[3]))
if not job then return err end
if not dry_run then
  err = ensure_format_2(job, false)
  if err then return err end
end
local live, live_count = live_runs()
if not live then return live_count end
local trimmed, complete, cursor = plan_trim(server_now_ms(), tonumber(ARGV[1]), tonumber(ARGV[2]),
  job.protect, tonumber(ARGV[4]), 0, ARGV[6], tonumber(ARGV[7]), live, live_count)
if not trimmed then return complete end
if not dry_run then apply_trim(trimmed, job.trimmed_to) end
local reply = {complete and '1' or '0', cursor}
for _, s in ipairs(trimmed.slots) do reply[#reply + 1] = s end
return reply
