-- An operator's release, and a finish sent twice: shared by both store formats' lease scripts
-- (src/scripts.rs appends it to lua/lease/v1/lib.lua and lua/lease/v2/lib.lua). docs/store-format.md, "Releasing
-- a run in progress", is the prose version.

-- The job hash field of a release mark.
local function release_field(slot)
  return 'released:' .. slot
end

-- An operator's release of a run in progress whose holder still has a live lease (`anarchon
-- release`): the job hash's (KEYS[6] in format 1, KEYS[3] in format 2) field released:<slot> holds
-- {"status": interrupted|failed, "result": {"released_by", "reason"}}. The run stays in progress under its lease, so nothing else can run
-- the job while its holder may still be running the command; the holder's next heartbeat answers
-- released, it stops its command and its finish records the attempt with this status. A holder
-- that never reports is ended by the next claim or release once its lease has expired.
-- Returns the mark (nil when there is none), or nil and an error reply.
local function release_mark(job_key, slot)
  -- A caller that passes no job key (format 1's heartbeat and finish took five keys before marks
  -- existed) cannot have marked runs.
  if not job_key then return nil end
  local text = redis.pcall('HGET', job_key, release_field(slot))
  if type(text) == 'table' and text.err then
    return nil, redis.error_reply('ANARCHON_WRONGTYPE ' .. job_key .. ' another-type hash')
  end
  if not text then return nil end
  local ok, mark = pcall(cjson.decode, text)
  if not ok or type(mark) ~= 'table' or (mark.status ~= 'interrupted' and mark.status ~= 'failed')
      or type(mark.result) ~= 'table' then
    return nil, redis.error_reply('ANARCHON_CORRUPT ' .. job_key .. ' field ' .. release_field(slot) .. ' is not a release')
  end
  return mark
end

-- A release mark's JSON: the status and the result (JSON object text, validated by the client).
local function encode_release_mark(status, result_json)
  return '{"status":"' .. status .. '","result":' .. result_json .. '}'
end

-- The result a released attempt is recorded with: the release's own (who, why), and how the
-- command ended when its holder reported it (command_json, JSON text) or that it never did.
local function released_result(mark, command_json)
  local result = mark.result
  local text = '{"released_by":' .. cjson.encode(tostring(result.released_by or '')) ..
    ',"reason":' .. cjson.encode(tostring(result.reason or 'released by an operator'))
  -- `run --overlap replace` names the newer slot the run made way for (health and metrics tell
  -- such a run from one interrupted by trouble).
  if type(result.replaced_by) == 'number' then
    text = text .. ',"replaced_by":' .. string.format('%.0f', result.replaced_by)
  end
  if command_json then
    text = text .. ',"command":' .. command_json
  else
    text = text .. ',"holder":"did not report before its lease ended"'
  end
  return text .. '}'
end

-- Removes a release mark once its run has ended.
local function forget_release(job_key, slot)
  redis.call('HDEL', job_key, release_field(slot))
end

-- The holder's answer to a heartbeat or finish of a released run: who released it and why.
local function release_words(mark)
  return tostring(mark.result.released_by or ''), tostring(mark.result.reason or '')
end

-- Whether `token`'s own finish of `slot` was recorded already with exactly `result_json`: a
-- finish whose reply was lost and is sent again is answered ok, not lost (finish is idempotent per
-- token, as claim is). Returns the recorded status, or nil.
local function own_result(results_key, slot, token, result_json)
  local quoted = '"token":' .. cjson.encode(token) .. ','
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', results_key, slot, slot)) do
    local tail = string.sub(m, -(#result_json + 2))
    if string.find(m, quoted, 1, true) and
        (string.sub(tail, 2) == result_json .. '}' or tail == result_json .. '}}') then
      local ok, r = pcall(cjson.decode, m)
      if ok and type(r) == 'table' and r.token == token and
          (r.status == 'finished' or r.status == 'failed' or r.status == 'interrupted') then
        return r.status
      end
    end
  end
  return nil
end

