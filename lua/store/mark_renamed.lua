-- mark_renamed(old): says in an old name's registry, `{<prefix><old>}:registry`, which name the
-- job runs under now (docs/store-format.md, "Job registry"), so that monitoring reports the old
-- name as renamed instead of judging slots nobody runs under it any more. Written by the new
-- name's registration (a key in another hash slot: a script of its own).
-- A registry that does not exist yet is made (an old name whose runs were claimed only through
-- the new name's lineage, whose own replicas never registered it: judged alone, it would read
-- `unknown`; a registry alone is no job for discovery). Marked only by a lineage at least as new
-- as the old name's own: after a rename back (`--was` naming the other way), replicas still
-- running the name renamed away must not mark the name now in use.
-- KEYS: 1 the old name's registry (hash)
-- ARGV: 1 the new name, 2 the new name's was_at (ms)
-- Reply: 1 marked, 0 not.
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end
local stored = redis.pcall('HMGET', KEYS[1], 'was_at', 'renamed_to')
if type(stored) == 'table' and stored.err then
  return redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[1] .. ' another type hash')
end
local own_was_at = tonumber(stored[1]) or 0
if own_was_at > tonumber(ARGV[2]) then return 0 end
if stored[2] == ARGV[1] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'renamed_to', ARGV[1], 'renamed_at', string.format('%d', now))
return 1
