# Shared by the bench scripts: a throwaway redis-server on a free loopback port, and timing helpers.
# Source it; it sets PORT, URL and BIN, and stops the server on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --quiet
BIN="$PWD/target/release/anarchon"
WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL="redis://127.0.0.1:$PORT"
SERVER=${ANARCHON_TEST_SERVER:-redis-server}
"$SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" --daemonize no >/dev/null &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
export ANARCHON_REDIS_URL="$URL"

# time_loop N CMD...: runs CMD N times (with $i set), prints the mean microseconds per run.
time_loop() {
  local n=$1; shift
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo $(( (end - start) / n / 1000 ))
}

# round_trips: reads the server processed so far (INFO stats total_reads_processed, Redis 6+): a
# request or a pipeline is one read (or more, when it arrives in pieces), a script's own commands
# none, and a client closing is one more. `redis-cli ping` counts 1.0 per process.
round_trips() {
  redis-cli -p "$PORT" info stats | awk -F: '/^total_reads_processed:/ {print $2 + 0}' | tr -d '\r'
}

# scripts_run: script calls so far (FCALL, EVALSHA, EVAL), from INFO commandstats.
scripts_run() {
  redis-cli -p "$PORT" info commandstats | awk -F'[=,:]' '
    /^cmdstat_(fcall|fcall_ro|evalsha|evalsha_ro|eval|eval_ro):/ {s += $3}
    END {print s+0}'
}

ratio() { python3 -c "print(f'{$1 / $2:.1f}')"; }

# time_with_trips N CMD...: like time_loop, but sets T (mean microseconds per run) and TRIPS (server
# reads per run, see round_trips) instead of printing.
time_with_trips() {
  local n=$1 before after
  before=$(round_trips)
  T=$(time_loop "$@")
  after=$(round_trips)
  # Less the two redis-cli calls' reads that fall in between, and each process's closing read.
  TRIPS=$(python3 -c "print(f'{($after - $before - 2) / $n - 1:.1f}')")
}

# seed_jobs JOBS: JOBS format 1 jobs with one finished run each (`{cron:jobNNNNN}`), through the
# binary's own claim and finish scripts, each with the registry `run --schedule` records (list,
# check and metrics read it for health). Sets CLAIM and FINISH (the scripts' SHAs) for more seeding.
seed_jobs() {
  cargo run --release --quiet --example scripts -- "$WORK/scripts"
  CLAIM=$(redis-cli -p "$PORT" script load "$(cat "$WORK/scripts/lease/v1/claim.lua")")
  FINISH=$(redis-cli -p "$PORT" script load "$(cat "$WORK/scripts/lease/v1/finish.lua")")
  redis-cli -p "$PORT" set cron:format 1 >/dev/null
  python3 bench/seed.py "$CLAIM" "$FINISH" "$1" 1 job | redis-cli -p "$PORT" --pipe >/dev/null
  python3 - "$1" <<'PY' | redis-cli -p "$PORT" --pipe >/dev/null
import sys
w = sys.stdout.buffer
for j in range(int(sys.argv[1])):
    a = ["HSET", "{cron:job%05d}:registry" % j, "schedule", "* * * * *", "tz", "UTC", "strategy", "lease",
         "max_late_ms", "60000", "jitter_ms", "0", "host:web-1", "1796220000000"]
    w.write(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in (y.encode() for y in a)))
PY
}
