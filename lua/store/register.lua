-- register(job): the job registry, `{<prefix><job>}:registry` (docs/store-format.md, "Job
-- registry"): what `anarchon run` was told about the job (schedule, time zone, lease, ...), its
-- earlier names, and the hosts that ran it recently. Monitoring (`list`, `check`, `metrics`)
-- reads it to know when runs are due. Writes only what changed: the settings when one differs, a
-- host's last-seen time when it is new or older than `refresh_ms`, the earlier names when one is
-- new; most runs of a job write nothing.
-- `was` only grows (the union of what every replica said): during a rolling deploy old replicas
-- that name fewer earlier names (or none) must not take them back, or monitoring would flap
-- between following the rename and not. When it grows, `was_at` is the time, and a `renamed_to`
-- this name carried goes when the grown names include it (it was renamed away, and is now back
-- under its own name: a rename back names the other name as its earlier one). An old replica's
-- first registration during a rolling deploy, after a new replica had marked the name renamed,
-- grows `was` too (the names before it), and must leave the mark: the soak found an old name
-- judged live, its slots run under the new name read as missed (cron, format 2, seed 20).
-- KEYS: 1 registry (hash)
-- ARGV: 1 host, 2 refresh_ms, 3 earlier names (comma-separated, may be empty), then setting
--       name/value pairs
-- Reply: {fields written, was_at (0: no earlier names)}.
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end
local host, refresh_ms, was = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local names, values = {}, {}
for i = 4, #ARGV, 2 do
  names[#names + 1] = ARGV[i]
  values[#values + 1] = ARGV[i + 1]
end
local host_field = 'host:' .. host
local n = #names
names[n + 1] = host_field
names[n + 2] = 'was'
names[n + 3] = 'was_at'
names[n + 4] = 'renamed_to'
local stored = redis.pcall('HMGET', KEYS[1], unpack(names))
if type(stored) == 'table' and stored.err then
  return redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[1] .. ' another type hash')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local writes = {}
local changed = false
for i = 1, n do
  if stored[i] ~= values[i] then changed = true end
end
-- The earlier names: the stored ones, then any new ones in the order given.
local known, merged = {}, {}
for name in string.gmatch(stored[n + 2] or '', '[^,]+') do
  if not known[name] then known[name] = true; merged[#merged + 1] = name end
end
local grew = false
for name in string.gmatch(was, '[^,]+') do
  if not known[name] then known[name] = true; merged[#merged + 1] = name; grew = true end
end
local was_at = tonumber(stored[n + 3]) or 0
if grew then
  changed = true
  was_at = now
  writes[#writes + 1] = 'was'
  writes[#writes + 1] = table.concat(merged, ',')
  writes[#writes + 1] = 'was_at'
  writes[#writes + 1] = string.format('%d', now)
  local renamed_to = stored[n + 4]
  if renamed_to and known[renamed_to] then
    redis.call('HDEL', KEYS[1], 'renamed_to', 'renamed_at')
  end
end
if changed then
  for i = 1, n do
    writes[#writes + 1] = names[i]
    writes[#writes + 1] = values[i]
  end
  writes[#writes + 1] = 'updated_at'
  writes[#writes + 1] = string.format('%d', now)
end
local seen = tonumber(stored[n + 1])
if not seen or now - seen >= refresh_ms then
  writes[#writes + 1] = host_field
  writes[#writes + 1] = string.format('%d', now)
end
if #writes > 0 then redis.call('HSET', KEYS[1], unpack(writes)) end
return {#writes / 2, was_at}
