-- A failed command's retry: shared by both store formats' lease scripts (src/store/lease/v1.rs and
-- v2.rs append it to their lib.lua, after handed_over.lua). docs/store-format.md, "Retries", is the
-- prose version.
--
-- A holder whose command failed, with retries left, does not end the run: its finish records the
-- attempt `failed` (its result saying when the retry is due) and moves the run's lease end to that
-- time, the run still in progress; the job hash's field retry:<slot> says so:
-- {"attempt": n, "at": <ms>, "given": k}: attempt n has ended for a retry at `at`, the k-th retry
-- of the slot. At `at` any claimant takes the run over as the next attempt, as it takes over an
-- expired lease, with the next fencing token; the claim records nothing for attempt n (its finish
-- did). The field stays while the run is in progress (its `given` bounds the retries and the
-- attempts: attempts_allowed) and goes with the run's end.

-- The job hash field of a retry.
local function retry_field(slot)
  return 'retry:' .. slot
end

-- The retry field of `slot`, decoded (nil: none, or one that does not read).
local function retry_mark(job_key, slot)
  if not job_key then return nil end
  local text = redis.pcall('HGET', job_key, retry_field(slot))
  if type(text) ~= 'string' then return nil end
  local ok, mark = pcall(cjson.decode, text)
  if ok and type(mark) == 'table' and tonumber(mark.attempt) and tonumber(mark.at) and tonumber(mark.given) then
    return mark
  end
  return nil
end

-- The retry mark of `slot` when its attempt `attempt` ended for a retry (the run waits for it).
local function pending_retry(job_key, slot, attempt)
  local mark = retry_mark(job_key, slot)
  if mark and tonumber(mark.attempt) == tonumber(attempt) then return mark end
  return nil
end

-- How many retries `slot` was given so far.
local function retries_given(job_key, slot)
  local mark = retry_mark(job_key, slot)
  if mark then return tonumber(mark.given) end
  return 0
end

-- Forgets a run's retries once it has ended. Only a run past its first attempt can have any.
local function forget_retry(job_key, slot, attempt)
  if job_key and tonumber(attempt) > 1 then redis.call('HDEL', job_key, retry_field(slot)) end
end

-- The delay before retry `given` + 1 (ms): `delay_ms` times `backoff` to the power of the retries
-- given, at most `max_ms`.
local function retry_delay(given, delay_ms, backoff, max_ms)
  local delay = delay_ms * (backoff ^ given)
  if delay > max_ms then delay = max_ms end
  return math.floor(delay)
end

-- The failed attempt's result with when its retry is due and which retry it is: `result_json`, a
-- JSON object (anarchon's), gets "retry_at" and "retry" as its last fields; any other value is
-- kept under "command".
local function retry_result(result_json, at, nth)
  local tail = ',"retry_at":' .. string.format('%d', at) .. ',"retry":' .. string.format('%d', nth) .. '}'
  local body = string.match(result_json, '^%s*{(.*)}%s*$')
  if body and string.match(body, '%S') then return '{' .. body .. tail end
  if body then return '{' .. string.sub(tail, 2) end
  return '{"command":' .. result_json .. tail
end

-- Marks attempt `attempt` of `slot` as ended for a retry at `at`, the `given`-th.
local function mark_retry(job_key, slot, attempt, at, given)
  redis.call('HSET', job_key, retry_field(slot), '{"attempt":' .. string.format('%d', tonumber(attempt)) ..
    ',"at":' .. string.format('%d', at) .. ',"given":' .. string.format('%d', given) .. '}')
end

-- The record of a retry that was never run (its run ended while it waited: released, superseded
-- by a newer run, or abandoned): attempt n + 1 of the run, never claimed, as `end_run` takes a run.
-- Its member says why (the caller's result), and the run ends as that attempt: one record, whose
-- status every reader takes as the run's end.
local function retry_not_run(run, now)
  return {attempt = tonumber(run.attempt) + 1, token = 'retry-not-run', runner = '',
          claimed_at = now, kind = run.kind, lease_end = run.lease_end}
end
