#!/usr/bin/env bash
# `anarchon list` over 10,000 jobs and `anarchon inspect` of a job with 1,000 runs, against
# redis-cli doing the same reads, measured in the same run.
# Usage: bench/operator.sh [JOBS] [RUNS] [REPEAT]   (defaults 10000 1000 5)
source "$(dirname "$0")/common.sh"
JOBS=${1:-10000}
RUNS=${2:-1000}
REPEAT=${3:-5}

# Format 1 jobs through the binary's own scripts, each with its registry (common.sh).
seed_jobs "$JOBS"
python3 bench/seed.py "$CLAIM" "$FINISH" 1 "$RUNS" big | redis-cli -p "$PORT" --pipe >/dev/null
echo "seeded $(redis-cli -p "$PORT" dbsize) keys: $JOBS jobs with 1 run, and one job with $RUNS runs"

# The same reads with redis-cli: the SCAN that finds the jobs, and one pipelined batch of the
# per-job reads list makes (SCARD, ZREVRANGE x2, XLEN, HMGET per job).
cli_list() {
  redis-cli -p "$PORT" --scan --pattern '{cron:*}:*' --count 1000 >/dev/null
  redis-cli -p "$PORT" --scan --pattern 'cron:*:*' --count 1000 >/dev/null
  python3 - "$JOBS" <<'PY' | redis-cli -p "$PORT" --pipe >/dev/null
import sys
n = int(sys.argv[1])
w = sys.stdout.buffer
def cmd(*a):
    w.write(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in (str(y).encode() for y in a)))
for j in range(n):
    t = "{cron:job%05d}" % j
    cmd("SCARD", t + ":active"); cmd("ZREVRANGE", t + ":slots", 0, 0); cmd("ZREVRANGE", t + ":results", 0, 0)
    cmd("XLEN", t + ":runs"); cmd("HMGET", t + ":state", "1000000:status", "1000000:runner")
PY
}
cli_inspect() {
  redis-cli -p "$PORT" xrevrange '{cron:big}:runs' + - count 20 >/dev/null
  redis-cli -p "$PORT" zrevrangebyscore '{cron:big}:results' +inf -inf limit 0 100 >/dev/null
  redis-cli -p "$PORT" smembers '{cron:big}:active' >/dev/null
}

t_list=$(time_loop "$REPEAT" "$BIN" list --json)
t_cli_list=$(time_loop "$REPEAT" cli_list)
t_inspect=$(time_loop "$REPEAT" "$BIN" inspect big --json)
t_cli_inspect=$(time_loop "$REPEAT" cli_inspect)
t_history=$(time_loop "$REPEAT" "$BIN" history big --last 1000 --json)

echo "anarchon list ($JOBS jobs):          $((t_list / 1000)) ms   ($(ratio "$t_list" "$t_cli_list")x redis-cli --scan + pipelined reads: $((t_cli_list / 1000)) ms)"
echo "anarchon inspect ($RUNS runs):       $((t_inspect / 1000)) ms   ($(ratio "$t_inspect" "$t_cli_inspect")x redis-cli XREVRANGE + ZREVRANGEBYSCORE + SMEMBERS: $((t_cli_inspect / 1000)) ms)"
echo "anarchon history --last $RUNS:      $((t_history / 1000)) ms"
before=$(redis-cli -p "$PORT" info stats | awk -F: '/total_reads_processed/ {print $2+0}')
"$BIN" list --json >/dev/null
after=$(redis-cli -p "$PORT" info stats | awk -F: '/total_reads_processed/ {print $2+0}')
echo "server reads for one list of $JOBS jobs: $((after - before))"
t_metrics=$(time_loop "$REPEAT" "$BIN" metrics)
t_check=$(time_loop "$REPEAT" "$BIN" check --all)
before=$(redis-cli -p "$PORT" info stats | awk -F: '/total_reads_processed/ {print $2+0}')
"$BIN" metrics >/dev/null
after=$(redis-cli -p "$PORT" info stats | awk -F: '/total_reads_processed/ {print $2+0}')
echo "anarchon metrics ($JOBS jobs):       $((t_metrics / 1000)) ms, $((after - before)) server reads ($(ratio "$t_metrics" "$t_list")x list)"
echo "anarchon check --all ($JOBS jobs):   $((t_check / 1000)) ms"
# Peak memory of one `list` (its RSS high-water mark, from the kernel's accounting of the child).
peak_kb=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$BIN" list --json)
echo "anarchon list ($JOBS jobs) peak RSS: $((peak_kb / 1024)) MB"
