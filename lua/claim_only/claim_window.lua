-- The script strategy's claim (claim-only layout; one key, so it works on Redis Cluster).
-- KEYS[1]: <prefix><job>:runs (stream)
-- ARGV: 1 slot, 2 token, 3 runner, 4 window_ms, 5 kind
-- Scans the claims made within the window for this slot and appends ours only if there is none.
-- Reply: {outcome, token, runner, server_now}: outcome won (ours) or done (the existing claim's).
local _, err = key_type('stream')
if err then return err end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot, token, runner, window, kind = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local from = math.max(now - window, 0)
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], tostring(from), '+')) do
  local f = entry[2]
  local fields = {}
  for i = 1, #f, 2 do fields[f[i]] = f[i + 1] end
  if fields.slot == slot then
    return {'done', fields.token or '', fields.runner or '', tostring(now)}
  end
end
redis.call('XADD', KEYS[1], '*', 'slot', slot, 'token', token, 'runner', runner, 'kind', kind,
  'claimed_at', tostring(now))
return {'won', token, runner, tostring(now)}
