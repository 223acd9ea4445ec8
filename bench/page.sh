#!/usr/bin/env bash
# The status page's cost to the store against `anarchon list`'s, measured in one run on the same
# seeded store (issue 51): commands and time for one read of the jobs page (`anarchon serve`,
# GET /, a page not read in the last second) against one `list --json`; then ten viewers at once,
# who share one read (src/page/server.rs, FRESH_FOR).
# Usage: bench/page.sh [JOBS] [REPEAT]   (defaults 1000 10)
source "$(dirname "$0")/common.sh"
JOBS=${1:-1000}
REPEAT=${2:-10}

seed_jobs "$JOBS"
echo "seeded $JOBS jobs ($(redis-cli -p "$PORT" dbsize) keys)"

commands() {
  redis-cli -p "$PORT" info commandstats | awk -F'[=,:]' '/^cmdstat_/ && !/^cmdstat_info:/ {s += $3} END {print s+0}'
}

"$BIN" serve --listen 127.0.0.1:0 2>"$WORK/serve.err" &
SERVE_PID=$!
trap 'kill "$SERVER_PID" "$SERVE_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do grep -q 'http://' "$WORK/serve.err" 2>/dev/null && break; sleep 0.05; done
BASE=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/serve.err" | head -1)
curl -s "$BASE/job/nosuch" >/dev/null   # the connection opened

get_page() { curl -sf "$BASE/?n=$i" >/dev/null; }
before=$(commands)
t_page=$(time_loop "$REPEAT" get_page)
page_commands=$(( ($(commands) - before - REPEAT) / REPEAT ))
before=$(commands)
t_list=$(time_loop "$REPEAT" "$BIN" list --json)
list_commands=$(( ($(commands) - before - REPEAT) / REPEAT ))

# Ten viewers at once, on a page not read yet.
before=$(commands)
for v in $(seq 10); do curl -sf "$BASE/?n=burst" >/dev/null & done
wait_viewers=$(jobs -p | grep -v "^$SERVE_PID$" | grep -v "^$SERVER_PID$" || true)
for p in $wait_viewers; do wait "$p"; done
burst_commands=$(( $(commands) - before - 1 ))

echo "jobs:                            $JOBS, each measured $REPEAT times"
echo "anarchon list --json:            $((t_list / 1000)) ms, $list_commands server commands (a process each: connect, checks)"
echo "the jobs page (GET /, uncached): $((t_page / 1000)) ms, $page_commands server commands ($(ratio "$page_commands" "$list_commands")x list's)"
echo "ten viewers at once:             $burst_commands server commands in all ($(ratio "$burst_commands" "$page_commands")x one read)"
