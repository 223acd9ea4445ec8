-- register(job): the job registry, `{<prefix><job>}:registry` (docs/store-format.md, "Job
-- registry"): what `anarchon run` was told about the job (schedule, time zone, lease, ...) and the
-- hosts that ran it recently. Monitoring (`list`, `check`, `metrics`) reads it to know when runs
-- are due. Writes only what changed: the settings when one differs, a host's last-seen time when
-- it is new or older than `refresh_ms`; most runs of a job write nothing.
-- KEYS: 1 registry (hash)
-- ARGV: 1 host, 2 refresh_ms, then setting name/value pairs
-- Reply: the number of fields written.
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end
local host, refresh_ms = ARGV[1], tonumber(ARGV[2])
local names, values = {}, {}
for i = 3, #ARGV, 2 do
  names[#names + 1] = ARGV[i]
  values[#values + 1] = ARGV[i + 1]
end
local host_field = 'host:' .. host
names[#names + 1] = host_field
local stored = redis.pcall('HMGET', KEYS[1], unpack(names))
if type(stored) == 'table' and stored.err then
  return redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[1] .. ' another type hash')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local writes = {}
local changed = false
for i = 1, #values do
  if stored[i] ~= values[i] then changed = true end
end
if changed then
  for i = 1, #values do
    writes[#writes + 1] = names[i]
    writes[#writes + 1] = values[i]
  end
  writes[#writes + 1] = 'updated_at'
  writes[#writes + 1] = string.format('%d', now)
end
local seen = tonumber(stored[#names])
if not seen or now - seen >= refresh_ms then
  writes[#writes + 1] = host_field
  writes[#writes + 1] = string.format('%d', now)
end
if #writes > 0 then redis.call('HSET', KEYS[1], unpack(writes)) end
return #writes / 2
