-- Shared by the claim-only scripts, each of which touches one key (KEYS[1]), so they work on Redis
-- Cluster without a hash tag (see src/scripts.rs). The lease layout's scripts use lib.lua instead.

-- Redis 5 and 6 refuse writes after TIME unless effects replication is on; 7+ always has it (and
-- REDIS_VERSION_NUM, new in 7: there the call, a no-op, would cost every script ~0.3 µs).
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then pcall(redis.replicate_commands) end

-- KEYS[1]'s type ('none' when absent), or an error reply naming the key when it is neither absent
-- nor `expected`: another program wrote it.
local function key_type(expected)
  local found = redis.call('TYPE', KEYS[1])
  if type(found) == 'table' then found = found.ok end
  if found ~= 'none' and found ~= expected then
    return nil, redis.error_reply('ANARCHON_WRONGTYPE ' .. KEYS[1] .. ' ' .. found .. ' ' .. expected)
  end
  return found
end
