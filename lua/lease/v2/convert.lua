-- convert(job): converts one format 1 job to format 2 (`anarchon migrate`, the only writer that
-- converts a job: format 2's other scripts refuse one). Costs a read per run in progress, whatever the
-- history's size (the format 1 keys are UNLINKed: freed off the main thread).
-- KEYS: 1-7 as in lua/lease/v2/lib.lua
-- Reply: {converted (0|1), runs in progress moved to :live}
if key_type(KEYS[4]) ~= 'hash' then return {'0', '0'} end
local before, err = checked(1, 'HLEN', KEYS[1])
if err then return err end
err = ensure_format_2({}, false, true)
if err then return err end
return {'1', tostring(redis.call('HLEN', KEYS[1]) - before)}
