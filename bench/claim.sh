#!/usr/bin/env bash
# `anarchon claim` against `redis-cli EVALSHA` of the same claim script with the same keys and
# arguments, one process per claim each, measured in the same run. Usage: bench/claim.sh [N]
source "$(dirname "$0")/common.sh"
N=${1:-300}

SHA=$(redis-cli -p "$PORT" script load "$(cat lua/lease/v1/lib.lua; echo; cat lua/lease/v1/claim.lua)")
redis-cli -p "$PORT" set cron:format 1 >/dev/null
K='{cron:cli}'
cli_claim() {
  redis-cli -p "$PORT" evalsha "$SHA" 6 "$K:state" "$K:active" "$K:slots" "$K:runs" "$K:results" "$K:job" \
    "$((1000 + i))" "tok$i" host:1 30000 3 1 scheduled 1000 0 3600000
}
anarchon_claim() { "$BIN" claim bench --slot "$((1000 + i))" --overlap allow --json; }

t_cli=$(time_loop "$N" cli_claim)
time_with_trips "$N" anarchon_claim
t_claim=$T
won=$(redis-cli -p "$PORT" scard '{cron:bench}:active')

echo "claims per variant:            $N (server: $SERVER)"
echo "redis-cli EVALSHA claim:       ${t_cli} us/claim"
echo "anarchon claim:                ${t_claim} us/claim   ($(ratio "$t_claim" "$t_cli")x redis-cli)"
echo "server reads per claim:        $TRIPS  (INFO stats; 2 round trips in this format 1 store: format check + TIME, claim)"
echo "claims won:                    $won of $N"
