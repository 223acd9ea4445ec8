#!/usr/bin/env bash
# What one run costs anarchon's own processes (issue #49): `anarchon run -- true` against
# `flock -n FILE true` (wall, CPU, page faults), and the daemon's CPU per run with 100 jobs every
# second. See bench/proc.py. Compare with another build: bench/proc.sh /path/to/old/anarchon
#   PAIRS=30 JOBS=100 SECS=20 bench/proc.sh [OTHER_BIN ...]; SKIP_DAEMON=1 (the wrapper only)
source "$(dirname "$0")/common.sh"
python3 bench/proc.py "$PORT" "$BIN" "$@"
