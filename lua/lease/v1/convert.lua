-- convert(job): the last step of converting one format 2 job back to format 1 (`anarchon migrate
-- --to 1`, src/store/lease/v1/convert.rs). The job's ended history was staged beforehand, by plain
-- commands into keys nobody else reads (KEYS 8-10): one `<slot>:status` per ended run (status alone,
-- as format 1 compacts an ended run), its slot, and one stream entry per ended attempt in the order
-- the attempts ended. This step costs a read per run in progress, whatever the history's size:
-- - it answers 'changed' and writes nothing unless the job is as it was when staging began (the
--   same last fencing token, so no claim was won since; as many skips taken back; the same runs
--   in progress; as many :results members), so that no run that ended meanwhile goes without its
--   status;
-- - it renames the staged keys into place (the marker string in :state is replaced), adds the runs
--   in progress as format 1 runs (all their fields, :active, :slots, `fence:<slot>` in :job), and
--   deletes :live;
-- - it records `format` 1 in :job: a format 2 script that read the store's format key before the
--   switch then meets a hash and is refused (lua/lease/v2/lib.lua ensure_format_2), and the caller
--   runs format 1's script instead; nothing converts the job forward again but `anarchon migrate`.
-- KEYS: 1-6 as in lib.lua, 7 live (hash), 8 staged state (hash), 9 staged slots (zset),
--       10 staged runs (stream)
-- ARGV: 1 the job's last fence and skips taken back when staging began, `<fence>:<unskipped>`
--       (each '' for none), 2 its :results count then,
--       3 its runs in progress then, as sorted lines `<slot> <token> <attempt>`, 4 the format 2
--       marker text
-- Reply: {'1', runs in progress moved} | {'0', '0'} (not a format 2 job: nothing to do) | {'changed'}
local found = redis.call('TYPE', KEYS[1])
if type(found) == 'table' then found = found.ok end
if found ~= 'string' then return {'0', '0'} end
if redis.call('GET', KEYS[1]) ~= ARGV[4] then
  return corrupt(KEYS[1], 'holds a string that is not the format 2 marker')
end
-- A format 2 job has none of format 1's other keys: something else wrote them.
for i = 2, 4 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    return corrupt(KEYS[i], 'exists beside the format 2 marker in ' .. KEYS[1])
  end
end
local t = redis.call('TYPE', KEYS[7])
if type(t) == 'table' then t = t.ok end
if t ~= 'none' and t ~= 'hash' then return corrupt(KEYS[7], 'is a ' .. t .. ', not a hash') end
local marks, err = checked(6, 'HMGET', KEYS[6], 'fence', 'unskipped')
if err then return err end
if (marks[1] or '') .. ':' .. (marks[2] or '') ~= ARGV[1] then return {'changed'} end
local count
count, err = checked(5, 'ZCARD', KEYS[5])
if err then return err end
if tostring(count) ~= ARGV[2] then return {'changed'} end

-- The runs in progress, each checked as format 2's scripts check them, and compared with staging's.
local flat = redis.call('HGETALL', KEYS[7])
local runs, lines = {}, {}
for i = 1, #flat, 2 do
  local s = flat[i]
  local ok, run = pcall(cjson.decode, flat[i + 1])
  if not is_int(s) or not ok or type(run) ~= 'table' or type(run.token) ~= 'string'
    or type(run.runner) ~= 'string' or type(run.attempt) ~= 'number'
    or type(run.lease_end) ~= 'number' or type(run.claimed_at) ~= 'number'
    or type(run.started_at) ~= 'number' then
    return corrupt(KEYS[7], 'field ' .. s .. ' is not a run in progress')
  end
  runs[#runs + 1] = {s, run}
  lines[#lines + 1] = s .. ' ' .. run.token .. ' ' .. string.format('%d', run.attempt)
end
table.sort(lines)
if table.concat(lines, '\n') ~= ARGV[3] then return {'changed'} end

-- The ended history, as staged.
if redis.call('EXISTS', KEYS[8]) == 1 then
  redis.call('RENAME', KEYS[8], KEYS[1])
else
  redis.call('DEL', KEYS[1])
end
if redis.call('EXISTS', KEYS[9]) == 1 then redis.call('RENAME', KEYS[9], KEYS[3]) end
if redis.call('EXISTS', KEYS[10]) == 1 then redis.call('RENAME', KEYS[10], KEYS[4]) end

-- The runs in progress. Ended runs older than the oldest of them are compacted already (status
-- alone): compacted_to tells the claims' compaction to start above them.
local oldest = nil
for _, pair in ipairs(runs) do
  local s, run = pair[1], pair[2]
  local fields = {field(s, 'status'), 'running', field(s, 'attempt'), string.format('%d', run.attempt),
    field(s, 'token'), run.token, field(s, 'runner'), run.runner,
    field(s, 'lease_end'), string.format('%d', run.lease_end),
    field(s, 'claimed_at'), string.format('%d', run.claimed_at),
    field(s, 'started_at'), string.format('%d', run.started_at)}
  if run.kind == 'manual' then
    fields[#fields + 1] = field(s, 'kind')
    fields[#fields + 1] = 'manual'
  end
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('SADD', KEYS[2], s)
  redis.call('ZADD', KEYS[3], s, s)
  if type(run.fence) == 'number' then
    redis.call('HSET', KEYS[6], fence_field(s), string.format('%d', run.fence))
  end
  if not oldest or tonumber(s) < oldest then oldest = tonumber(s) end
end
local below = oldest and ('(' .. string.format('%d', oldest)) or '+inf'
local newest_ended = redis.call('ZREVRANGEBYSCORE', KEYS[3], below, '-inf', 'LIMIT', 0, 1)[1]
local compacted_to = redis.call('HGET', KEYS[6], 'compacted_to')
if newest_ended and (not is_int(compacted_to) or tonumber(compacted_to) < tonumber(newest_ended)) then
  redis.call('HSET', KEYS[6], 'compacted_to', newest_ended)
end
redis.call('DEL', KEYS[7])
redis.call('HSET', KEYS[6], 'format', '1')
return {'1', tostring(#runs)}
