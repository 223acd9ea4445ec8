-- unskip(job, slot), store format 1: takes back a skip (skip.lua) so that the slot can be claimed
-- as a new run (`run --backfill --include-skipped`: an operator asked for it). Only a slot whose
-- history is exactly one skip (its :results member: status skipped, attempt 0) and whose state is
-- still the skip's final `interrupted` (or that status alone, compacted): nothing ever ran it. Its
-- state fields, its :slots member and the skip's :results member go; the claim that follows (the
-- same one every host sends, decided by claim.lua) runs it once.
-- KEYS: 1-6 as in lib.lua
-- ARGV: 1 slot
-- Reply: {outcome, status}; outcome is unskipped, or not_skipped with the slot's status ('' none).
local err = check_key_types(6)
if err then return err end
local slot = ARGV[1]
local run
run, err = read_valid_run(slot)
if not run then return err end
if run.status ~= 'interrupted' then return {'not_skipped', run.status or ''} end
local members = redis.call('ZRANGEBYSCORE', KEYS[5], slot, slot)
if #members ~= 1 then return {'not_skipped', run.status} end
local ok, r = pcall(cjson.decode, members[1])
if not ok or type(r) ~= 'table' or r.status ~= 'skipped' or r.attempt ~= 0 then
  return {'not_skipped', run.status}
end
local p = slot .. ':'
redis.call('HDEL', KEYS[1], p .. 'status', p .. 'attempt', p .. 'token', p .. 'runner',
  p .. 'lease_end', p .. 'claimed_at', p .. 'started_at', p .. 'finished_at', p .. 'kind', p .. 'result')
redis.call('ZREM', KEYS[3], slot)
redis.call('ZREM', KEYS[5], members[1])
return {'unskipped', 'skipped'}
