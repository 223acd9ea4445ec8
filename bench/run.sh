#!/usr/bin/env bash
# `anarchon run -- true` against plain `true` and `flock -n FILE true`, measured in the same run,
# plus the Redis commands one run costs. Usage: bench/run.sh [N]  (default 300 runs each)
source "$(dirname "$0")/common.sh"
N=${1:-300}
LOCK="$WORK/lock"

run_once() { "$BIN" run --job bench --slot "$((1000 + i))" --overlap allow -- /bin/true; }

t_true=$(time_loop "$N" /bin/true)
t_flock=$(time_loop "$N" flock -n "$LOCK" /bin/true)
time_with_trips "$N" run_once
t_run=$T
claimed=$(redis-cli -p "$PORT" zcard '{cron:bench}:results')

echo "runs per variant:              $N (server: $SERVER)"
echo "/bin/true:                     ${t_true} us/run"
echo "flock -n FILE true:            ${t_flock} us/run   ($(ratio "$t_flock" "$t_true")x true)"
echo "anarchon run -- true:          ${t_run} us/run   ($(ratio "$t_run" "$t_true")x true, $(ratio "$t_run" "$t_flock")x flock)"
echo "server reads per run:          $TRIPS  (INFO stats; 4 round trips: format check + TIME + registry read; the claim's look; claim; finish)"
echo "runs recorded:                 $claimed of $N"

# A host that loses: the slot is held (a claim with a long lease), each run is told running.
"$BIN" claim held --slot 5000 --lease 10m >/dev/null
lose_once() { "$BIN" run --job held --slot 5000 --no-backup -- /bin/true; }
"$BIN" run --job held --slot 5000 --no-backup -- /bin/true >/dev/null 2>&1 || true  # registers the job
scripts_before=$(scripts_run)
time_with_trips "$N" lose_once
echo "a losing run (slot held):      ${T} us/run, $TRIPS server reads (2 round trips: format check + registry read; the look), $(ratio "$(( $(scripts_run) - scripts_before ))" "$N") scripts per run"
redis-cli -p "$PORT" info commandstats | grep -E '^cmdstat_(evalsha|eval|set|get|time|hello|client)' | sed 's/^/  /'
