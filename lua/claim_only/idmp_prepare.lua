-- The idmp strategy's one-time stream set-up (claim-only layout; one key).
-- KEYS[1]: <prefix><job>:runs (stream)
-- ARGV: 1 idmp duration (s), 2 idmp max size
-- XCFGSET clears the stream's idempotency memory, so it may run only while nothing is remembered:
-- when the stream does not exist yet. Creating and configuring it in one script keeps a second
-- claimant from slipping its XADD in between. Reply: 1 if configured now, 0 if it existed.
local found, err = key_type('stream')
if err then return err end
if found == 'stream' then return 0 end
redis.call('XADD', KEYS[1], '0-1', 'init', '1')
redis.call('XDEL', KEYS[1], '0-1')
redis.call('XCFGSET', KEYS[1], 'IDMP-DURATION', ARGV[1], 'IDMP-MAXSIZE', ARGV[2])
return 1
