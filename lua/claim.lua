-- claim(job, slot, token): decides who runs one scheduled run, exactly as the seed's decision tree.
-- ARGV: 1 slot (ms), 2 token, 3 runner, 4 lease_ms, 5 max_attempts, 6 allow_overlap (0|1),
--       7 kind (scheduled|manual), 8 history_size, 9 history_ttl_ms (0 = none), 10 keep_ms
-- Reply: {outcome, attempt, lease_end, runner, status, server_now, other_slot}, all strings;
--   outcome is won | overlap | done | running. For overlap the other fields describe the older run.
local err = check_key_types(5)
if err then return err end

local slot, token, runner = ARGV[1], ARGV[2], ARGV[3]
local lease_ms, max_attempts = tonumber(ARGV[4]), tonumber(ARGV[5])
local allow_overlap, kind = ARGV[6] == '1', ARGV[7]
local now = server_now_ms()
local lease_end = now + lease_ms

local function reply(outcome, attempt, end_ms, who, status, other)
  return {outcome, tostring(attempt or ''), tostring(end_ms or ''), who or '', status or '', tostring(now), other or ''}
end

local run = read_run(slot)

if not run.status then
  if not allow_overlap then
    local slot_ms = tonumber(slot)
    for _, other in ipairs(redis.call('SMEMBERS', KEYS[2])) do
      if tonumber(other) and tonumber(other) < slot_ms then
        local o = read_run(other)
        if o.status == 'running' and (tonumber(o.lease_end) or 0) > now then
          return reply('overlap', o.attempt, o.lease_end, o.runner, o.status, other)
        end
      end
    end
  end
  redis.call('HSET', KEYS[1],
    field(slot, 'status'), 'running', field(slot, 'attempt'), 1, field(slot, 'token'), token,
    field(slot, 'runner'), runner, field(slot, 'lease_end'), lease_end, field(slot, 'claimed_at'), now,
    field(slot, 'started_at'), now, field(slot, 'kind'), kind)
  redis.call('SADD', KEYS[2], slot)
  redis.call('ZADD', KEYS[3], slot, slot)
  trim_history(now, tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), 100, false)
  return reply('won', 1, lease_end, runner, 'running', '')
end

if run.status ~= 'running' then
  return reply('done', run.attempt, run.lease_end, run.runner, run.status, '')
end

local attempt, e = int_field(run, slot, 'attempt')
if e then return e end
local current_end
current_end, e = int_field(run, slot, 'lease_end')
if e then return e end

if current_end > now then
  return reply('running', attempt, current_end, run.runner, 'running', '')
end

-- The lease expired: its holder is gone. Its attempt ends as interrupted either way.
record_attempt(slot, run, 'interrupted', now, '{"reason":"lease expired"}')
if attempt < max_attempts then
  redis.call('HSET', KEYS[1],
    field(slot, 'attempt'), attempt + 1, field(slot, 'token'), token, field(slot, 'runner'), runner,
    field(slot, 'lease_end'), lease_end, field(slot, 'claimed_at'), now)
  return reply('won', attempt + 1, lease_end, runner, 'running', '')
end

redis.call('HSET', KEYS[1], field(slot, 'status'), 'interrupted', field(slot, 'finished_at'), now)
redis.call('SREM', KEYS[2], slot)
return reply('done', attempt, current_end, run.runner, 'interrupted', '')
