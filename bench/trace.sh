#!/usr/bin/env bash
# What tracing costs a run (issue 51), measured in one run against the same run untraced:
# `anarchon run -- CMD` with no OTEL variable (the baseline), with a collector that answers at once
# (a floor: a Python receiver that reads the export and answers 200, doing nothing else), with one
# that takes the connection and never answers, and with none listening. Two figures each: the
# whole process (what a crontab's `run` takes), and from its exec to its command's start (what the
# run itself waits). Usage: bench/trace.sh [N]  (default 100; about 6 minutes)
source "$(dirname "$0")/common.sh"
N=${1:-100}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
COLLECTOR=$(free_port)
HUNG=$(free_port)
REFUSED=$(free_port)
python3 - "$COLLECTOR" "$WORK/exports" <<'PY' &
import http.server, sys
port, counted = int(sys.argv[1]), sys.argv[2]
class Floor(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(counted, "a") as f:
            f.write(f"{len(body)}\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Floor).serve_forever()
PY
FLOOR_PID=$!
python3 - "$HUNG" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(128)
held = []
while True:
    held.append(s.accept())
PY
HUNG_PID=$!
trap 'kill "$SERVER_PID" "$FLOOR_PID" "$HUNG_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
for port in "$COLLECTOR" "$HUNG"; do
  for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null && break; sleep 0.1; done
done

# N runs of a variant (an endpoint, or empty: untraced), each $PAUSE seconds after the last ended;
# sets WHOLE and START (microseconds, means).
measure() {
  local endpoint=$1 job=$2 n=$3 whole=0 start=0 t0 t1 began
  for ((i = 0; i < n; i++)); do
    sleep "$PAUSE"
    t0=$(date +%s%N)
    if [ -n "$endpoint" ]; then
      OTEL_EXPORTER_OTLP_ENDPOINT=$endpoint "$BIN" run --job "$job" --slot "$((1000 + i))" --overlap allow \
        -- sh -c "date +%s%N > $WORK/began" >/dev/null 2>&1 || true
    else
      "$BIN" run --job "$job" --slot "$((1000 + i))" --overlap allow \
        -- sh -c "date +%s%N > $WORK/began" >/dev/null 2>&1 || true
    fi
    t1=$(date +%s%N)
    began=$(cat "$WORK/began")
    whole=$((whole + t1 - t0))
    start=$((start + began - t0))
  done
  WHOLE=$((whole / n / 1000))
  START=$((start / n / 1000))
}

# The whole process, runs back to back. The start, each run 2.5 s after the last ended: a process
# started right after another starts faster than one after an idle pause (caches, the CPU's
# clock), and a traced run's exit waits up to 2 s for a hung collector, so every variant gets the
# same pause for this figure.
M=$(( N / 5 > 10 ? N / 5 : 10 ))
PAUSE=0
measure "" off "$N";                            off_whole=$WHOLE
measure "http://127.0.0.1:$COLLECTOR" on "$N";  on_whole=$WHOLE
measure "http://127.0.0.1:$HUNG" hung "$M";     hung_whole=$WHOLE
measure "http://127.0.0.1:$REFUSED" gone "$M";  gone_whole=$WHOLE
PAUSE=2.5
measure "" off2 "$M";                           off_start=$START
measure "http://127.0.0.1:$COLLECTOR" on2 "$M"; on_start=$START
measure "http://127.0.0.1:$HUNG" hung2 "$M";    hung_start=$START
measure "http://127.0.0.1:$REFUSED" gone2 "$M"; gone_start=$START
exports=$(wc -l < "$WORK/exports")

echo "runs:                                   $N back to back untraced and answered, $M hung and gone; $M each 2.5 s apart for the start"
echo "                                         whole process    exec to the command's start"
printf 'untraced (no OTEL variable):            %8d us         %8d us\n' "$off_whole" "$off_start"
printf 'traced, a collector answering at once:  %8d us (%sx)  %8d us (%sx)\n' "$on_whole" "$(ratio "$on_whole" "$off_whole")" "$on_start" "$(ratio "$on_start" "$off_start")"
printf 'traced, a collector that never answers: %8d us (%sx)  %8d us (%sx)\n' "$hung_whole" "$(ratio "$hung_whole" "$off_whole")" "$hung_start" "$(ratio "$hung_start" "$off_start")"
printf 'traced, no collector listening:         %8d us (%sx)  %8d us (%sx)\n' "$gone_whole" "$(ratio "$gone_whole" "$off_whole")" "$gone_start" "$(ratio "$gone_start" "$off_start")"
echo "exports the answering collector took:   $exports for $((N + M)) runs (one batch each: slot, attempt, command)"
