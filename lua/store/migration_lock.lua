-- migration_lock(op, token, holder, ms): the lock that keeps two `anarchon migrate` from running at
-- once under a prefix. KEYS[1] is `<prefix>migrating`; its value is "<token> <holder>", with a TTL
-- renewed while the migration runs, so a killed migration frees it by itself.
--   take:    set it if absent; reply {'taken'} or {'held', value, ttl ms}
--   renew:   extend it if ours; reply {'renewed'} or {'lost'}
--   release: delete it if ours; reply {'released'} or {'lost'}
local op, token, holder, ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local found = redis.call('GET', KEYS[1])
local ours = found and string.sub(found, 1, #token + 1) == token .. ' '
if op == 'take' then
  if found then return {'held', found, tostring(redis.call('PTTL', KEYS[1]))} end
  redis.call('SET', KEYS[1], token .. ' ' .. holder, 'PX', ms)
  return {'taken'}
end
if not ours then return {'lost'} end
if op == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ms)
  return {'renewed'}
end
redis.call('DEL', KEYS[1])
return {'released'}
