-- format_switch(from, to): moves the store's format key from one format to the next, atomically, for
-- `anarchon migrate`. KEYS[1] is `<prefix>format` (a single key: no hash tag needed).
-- `from` empty: the key must be absent (an empty prefix marked format 2 by `anarchon migrate`).
-- Reply: 'switched', 'already' (it holds `to`), or the value found (nothing written).
local found = redis.call('GET', KEYS[1]) or ''
if found == ARGV[2] then return 'already' end
if found ~= ARGV[1] then return found end
redis.call('SET', KEYS[1], ARGV[2])
return 'switched'
