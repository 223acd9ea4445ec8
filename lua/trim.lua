-- trim(job): history trimming on demand (`anarchon trim`), with exactly the rules claim applies.
-- KEYS: 1-5 as in lib.lua, 6 job (hash)
-- ARGV: 1 history_size, 2 history_ttl_ms (0 = none), 3 keep_ms, 4 budget, 5 dry_run (0|1)
-- Reply: the trimmed slots (with dry_run: the slots that would be trimmed; nothing is written).
local err = check_key_types(6)
if err then return err end
-- Never less protection than the job's claimants recorded (the client refuses a shorter --protect).
local keep_ms = read_job_limits(tonumber(ARGV[3]))
return trim_history(server_now_ms(), tonumber(ARGV[1]), tonumber(ARGV[2]), keep_ms,
  tonumber(ARGV[4]), ARGV[5] == '1')
