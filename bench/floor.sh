#!/usr/bin/env bash
# Script time per run against the layout floor (bench/floor/), both store formats, history 100 and
# 1000, in one run: see bench/floor.py. Needs only the scripts, not a release build of the binary.
#   bench/floor.sh             # the scripts this build sends (cargo run --example scripts)
#   bench/floor.sh OLD/scripts # another version's `cargo run --example scripts` output
#   ROUNDS=N HISTORIES="100 1000" FORMATS="1 2" bench/floor.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${ANARCHON_TEST_SERVER:-redis-server}" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$WORK" --daemonize no >/dev/null &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
if [ -z "${1:-}" ]; then cargo run --quiet --example scripts -- "$WORK/scripts"; fi
python3 bench/floor.py "$PORT" "${1:-$WORK/scripts}"
