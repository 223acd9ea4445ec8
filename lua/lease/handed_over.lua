-- A hand-over: shared by both store formats' lease scripts (src/store/lease/v1.rs and v2.rs append
-- it to their lib.lua). docs/store-format.md, "Hand-overs", is the prose version.

-- The job hash field of a hand-over mark.
local function handed_field(slot)
  return 'handed_over:' .. slot
end

-- The holder of `slot` gave its run up (`anarchon cron` shutting down, its command stopped: the
-- heartbeat's hand-over): the job hash's (KEYS[6] in format 1, KEYS[3] in format 2) field
-- handed_over:<slot> holds {"attempt": n, "runner": holder, "why": "shutdown"}, so that the claim
-- that records the attempt's end says it was handed over, not that its holder died. The caller
-- has read the job hash already (its type is checked).
local function mark_handed_over(job_key, slot, attempt, runner, why)
  if not job_key then return end
  redis.call('HSET', job_key, handed_field(slot), '{"attempt":' .. string.format('%d', tonumber(attempt)) ..
    ',"runner":' .. cjson.encode(runner or '') .. ',"why":' .. cjson.encode(why) .. '}')
end

-- The result of attempt `attempt` of `slot`, ended because its lease ended without a finish:
-- {"reason":"handed over","handed_over_by":...,"why":...} when its holder handed it over (the
-- mark is then deleted; a mark of another attempt too), else {"reason":"lease expired"}. `extra`:
-- more fields, as JSON text that starts with a comma (',"superseded_by":<slot>'), or nil.
-- The hand-over mark of `slot`: whether the field is there, and the mark when it names attempt
-- `attempt` (nil for a mark of another attempt, or one that does not read).
local function hand_over_mark(job_key, slot, attempt)
  if not job_key then return false, nil end
  local text = redis.pcall('HGET', job_key, handed_field(slot))
  if type(text) ~= 'string' then return false, nil end
  local ok, mark = pcall(cjson.decode, text)
  if ok and type(mark) == 'table' and tonumber(mark.attempt) == tonumber(attempt) then
    return true, mark
  end
  return true, nil
end

local function expired_result(job_key, slot, attempt, extra)
  extra = extra or ''
  local present, mark = hand_over_mark(job_key, slot, attempt)
  if present then
    redis.call('HDEL', job_key, handed_field(slot))
    if mark then
      return '{"reason":"handed over","handed_over_by":' .. cjson.encode(tostring(mark.runner or '')) ..
        ',"why":' .. cjson.encode(tostring(mark.why or 'shutdown')) .. extra .. '}'
    end
  end
  return '{"reason":"lease expired"' .. extra .. '}'
end

-- A hand-over spends no attempt of --max-attempts: it is an ordinary operation (a replica shutting
-- down in a rolling deploy, a renamed job's claim passed on), not a crash, and a run handed over
-- by every replica a deploy restarts must still find one to run it. Bounded all the same: the
-- attempt after a hand-over is claimed while the attempt number is below max_attempts plus this.
local HAND_OVER_LEEWAY = 10

-- How many attempts `slot` may have, its attempt `attempt` having lapsed: --max-attempts, plus
-- the retries its failed commands were given (retry.lua: a retry spends no attempt either), and
-- HAND_OVER_LEEWAY more when that attempt was handed over (its mark, read before expired_result
-- deletes it, names it).
local function attempts_allowed(job_key, slot, attempt, max_attempts)
  local allowed = max_attempts + retries_given(job_key, slot)
  local _, mark = hand_over_mark(job_key, slot, attempt)
  if mark then return allowed + HAND_OVER_LEEWAY end
  return allowed
end
