-- finish for the claim-only layout: records one run's result, once.
-- KEYS[1]: <prefix><job>:results (zset)
-- ARGV: 1 slot, 2 token, 3 member (the result JSON text, validated by the client)
-- The caller checked that the token is the one in the run's claim entry (that entry never changes).
-- Reply: {'ok'}, or {'done', status} when a result with this slot and token exists already: a run is
-- finished once (a second finish writes nothing).
local _, err = key_type('zset')
if err then return err end
local slot, token = ARGV[1], ARGV[2]
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], slot, slot)) do
  local ok, r = pcall(cjson.decode, member)
  if not ok or type(r) ~= 'table' then
    return redis.error_reply('ANARCHON_CORRUPT ' .. KEYS[1] .. ' a member at score ' .. slot .. ' is not a JSON object')
  end
  if r.token == token then
    return {'done', tostring(r.status)}
  end
end
redis.call('ZADD', KEYS[1], slot, ARGV[3])
return {'ok'}
