#!/usr/bin/env python3
"""An independent client of store format 1, written from docs/store-format.md alone (not from
anarchon's code): the lease layout as the seed's RedisBackend describes it. tests/it/format1_client.rs
races it against `anarchon claim` and `anarchon run` on the same slots.

    format1.py URL claim JOB SLOT TOKEN RUNNER LEASE_MS   -> {"outcome", "attempt", "status"}
    format1.py URL heartbeat JOB SLOT TOKEN LEASE_MS      -> {"outcome"}
    format1.py URL finish JOB SLOT TOKEN STATUS RESULT    -> {"outcome"}
    format1.py URL history JOB                            -> [{"slot", "status", "runner", ...}]
    format1.py URL state JOB SLOT                         -> {"<attribute>": "<value>", ...}
    format1.py URL race JOB SLOT RUNNER LOG               -> claims; when won, appends
                                                             "<slot> <runner>" to LOG, finishes

Only what the document promises a format 1 reader is used: the format key (refuse a newer one),
`:state` fields `<slot>:<attribute>`, `:active`, `:slots`, `:runs`, `:results` and `:job`'s
`trimmed_to`. Each script reads the server's TIME itself.
"""
import json
import sys

import redis

PREFIX = "cron:"

# The seed's flowchart (redis-backend.md, "lease"), format 1 keys, one script.
CLAIM = """
local state, active, slots, job = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local slot, token, runner, lease = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local max_attempts = 3
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function f(s, name) return s .. ':' .. name end
local status = redis.call('HGET', state, f(slot, 'status'))
if not status then
  local trimmed_to = redis.call('HGET', job, 'trimmed_to')
  if trimmed_to and tonumber(slot) <= tonumber(trimmed_to) then return {'done', '', 'trimmed'} end
  for _, other in ipairs(redis.call('SMEMBERS', active)) do
    if tonumber(other) < tonumber(slot) and
        redis.call('HGET', state, f(other, 'status')) == 'running' and
        tonumber(redis.call('HGET', state, f(other, 'lease_end'))) > now then
      return {'overlap', '', 'running'}
    end
  end
  redis.call('HSET', state, f(slot, 'status'), 'running', f(slot, 'attempt'), 1,
    f(slot, 'token'), token, f(slot, 'runner'), runner, f(slot, 'lease_end'), now + lease,
    f(slot, 'claimed_at'), now, f(slot, 'started_at'), now)
  redis.call('SADD', active, slot)
  redis.call('ZADD', slots, slot, slot)
  return {'won', '1', 'running'}
end
if status ~= 'running' then return {'done', '', status} end
local attempt = tonumber(redis.call('HGET', state, f(slot, 'attempt')))
if tonumber(redis.call('HGET', state, f(slot, 'lease_end'))) > now then
  return {'running', tostring(attempt), 'running'}
end
if attempt < max_attempts then
  redis.call('HSET', state, f(slot, 'attempt'), attempt + 1, f(slot, 'token'), token,
    f(slot, 'runner'), runner, f(slot, 'lease_end'), now + lease, f(slot, 'claimed_at'), now)
  return {'won', tostring(attempt + 1), 'running'}
end
redis.call('HSET', state, f(slot, 'status'), 'interrupted')
redis.call('SREM', active, slot)
return {'done', tostring(attempt), 'interrupted'}
"""

HEARTBEAT = """
local state, slot, token = KEYS[1], ARGV[1], ARGV[2]
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('HGET', state, slot .. ':status') ~= 'running' or
    redis.call('HGET', state, slot .. ':token') ~= token then
  return 'lost'
end
local ends = math.max(tonumber(redis.call('HGET', state, slot .. ':lease_end')), now + tonumber(ARGV[3]))
redis.call('HSET', state, slot .. ':lease_end', ends)
return 'ok'
"""

FINISH = """
local state, active, runs, results = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local slot, token, status, result = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function get(name) return redis.call('HGET', state, slot .. ':' .. name) end
if get('status') ~= 'running' or get('token') ~= token then return 'lost' end
local attempt, runner, claimed_at = get('attempt'), get('runner') or '', get('claimed_at')
redis.call('XADD', runs, '*', 'slot', slot, 'attempt', attempt, 'token', token, 'runner', runner,
  'status', status, 'claimed_at', claimed_at, 'ended_at', now, 'kind', get('kind') or 'scheduled')
redis.call('ZADD', results, slot, '{"slot":' .. slot .. ',"attempt":' .. attempt .. ',"token":' ..
  cjson.encode(token) .. ',"runner":' .. cjson.encode(runner) .. ',"status":' .. cjson.encode(status) ..
  ',"claimed_at":' .. claimed_at .. ',"ended_at":' .. now .. ',"result":' .. result .. '}')
redis.call('HSET', state, slot .. ':status', status, slot .. ':finished_at', now)
redis.call('SREM', active, slot)
return 'ok'
"""


def keys(job, *names):
    return [f"{{{PREFIX}{job}}}:{name}" for name in names]


def check_format(r):
    """The format key: absent (create it as 1) or 1; a newer one is refused, nothing written."""
    r.set(f"{PREFIX}format", 1, nx=True)
    found = r.get(f"{PREFIX}format")
    if found != "1":
        sys.exit(f"ANARCHON_STORE_FORMAT {found}: this client reads format 1 only")


def main():
    url, command, job, *args = sys.argv[1:]
    # RESP2: redis-py 8 speaks RESP3 (HELLO 3) by default, which Redis 5 does not know.
    # redis-py before 5 (Debian 12's python3-redis 4.3) has no `protocol` and speaks RESP2.
    resp2 = {"protocol": 2} if int(redis.__version__.split(".")[0]) >= 5 else {}
    r = redis.Redis.from_url(url, decode_responses=True, **resp2)
    if command == "claim":
        check_format(r)
        slot, token, runner, lease = args
        reply = r.eval(CLAIM, 4, *keys(job, "state", "active", "slots", "job"), slot, token, runner, lease)
        print(json.dumps({"outcome": reply[0], "attempt": reply[1], "status": reply[2]}))
    elif command == "heartbeat":
        check_format(r)
        slot, token, lease = args
        print(json.dumps({"outcome": r.eval(HEARTBEAT, 1, *keys(job, "state"), slot, token, lease)}))
    elif command == "finish":
        check_format(r)
        slot, token, status, result = args
        reply = r.eval(FINISH, 4, *keys(job, "state", "active", "runs", "results"), slot, token, status, result)
        print(json.dumps({"outcome": reply}))
    elif command == "history":
        members = r.zrange(keys(job, "results")[0], 0, -1, withscores=True)
        print(json.dumps([dict(json.loads(m), slot=int(score)) for m, score in members]))
    elif command == "state":
        (slot,) = args
        fields = r.hgetall(keys(job, "state")[0])
        print(json.dumps({k.split(":", 1)[1]: v for k, v in fields.items() if k.split(":", 1)[0] == slot}))
    elif command == "race":
        check_format(r)
        slot, runner, log = args
        token = f"py-{runner}-{slot}"
        reply = r.eval(CLAIM, 4, *keys(job, "state", "active", "slots", "job"), slot, token, runner, 30000)
        if reply[0] == "won":
            with open(log, "a") as f:
                f.write(f"{slot} {runner}\n")
            done = r.eval(FINISH, 4, *keys(job, "state", "active", "runs", "results"), slot, token,
                          "finished", '{"by":"python"}')
            assert done == "ok", done
        print(json.dumps({"outcome": reply[0]}))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
