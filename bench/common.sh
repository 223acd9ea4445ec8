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

# round_trips: requests clients have sent, from INFO commandstats. Commands that scripts call
# inside the server (TYPE, HGET, ...) are not round trips; a pipeline counts once, by its GET.
round_trips() {
  redis-cli -p "$PORT" info commandstats | awk -F'[=,:]' '
    /^cmdstat_(get|evalsha|eval|hello|client\|setinfo|select|auth|scan|hgetall|xrevrange|zrevrangebyscore):/ {s += $3}
    END {print s+0}'
}

ratio() { python3 -c "print(f'{$1 / $2:.1f}')"; }

# time_with_trips N CMD...: like time_loop, but sets T (mean microseconds per run) and TRIPS (Redis
# round trips per run) instead of printing.
time_with_trips() {
  local n=$1 before after
  before=$(round_trips)
  T=$(time_loop "$@")
  after=$(round_trips)
  TRIPS=$(ratio "$((after - before))" "$n")
}
