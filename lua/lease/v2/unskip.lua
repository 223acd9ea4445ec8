-- unskip(job, slot), store format 2: takes back a skip (skip.lua) so that the slot can be claimed
-- as a new run (`run --backfill --include-skipped`: an operator asked for it). Only a slot not in
-- progress whose history is exactly one skip (its :results member: status skipped, attempt 0):
-- nothing ever ran it. The member goes; the claim that follows (the same one every host sends,
-- decided by claim.lua) runs it once. :job `unskipped` counts the skips taken back.
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- ARGV: 1 slot
-- Reply: {outcome, status}; outcome is unskipped, or not_skipped with the slot's status ('' none).
local slot = ARGV[1]
local job, err = read_job(0)
if not job then return err end
err = ensure_format_2(job, true)
if err then return err end
local run
run, err = live_run(slot)
if run == nil then return err end
if run then return {'not_skipped', 'running'} end
local members
members, err = checked(2, 'ZRANGEBYSCORE', KEYS[2], slot, slot)
if err then return err end
if #members ~= 1 then
  local final
  final, err = ended_run(slot)
  if err then return err end
  return {'not_skipped', final and final.status or ''}
end
local ok, r = pcall(cjson.decode, members[1])
if not ok or type(r) ~= 'table' or r.status ~= 'skipped' or r.attempt ~= 0 then
  return {'not_skipped', type(r) == 'table' and r.status or ''}
end
redis.call('ZREM', KEYS[2], members[1])
-- Counted, so that a conversion back to format 1 (lua/lease/v1/convert.lua) that staged the job's
-- members before sees that one went, even when a skip added another meanwhile.
redis.call('HINCRBY', KEYS[3], 'unskipped', 1)
return {'unskipped', 'skipped'}
