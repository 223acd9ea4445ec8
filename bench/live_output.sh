#!/usr/bin/env bash
# The server's cost of `run --live-output` per line of output, and of a run without it, measured
# inside Redis (INFO commandstats, INFO cpu). See bench/live_output.py.
#   bench/live_output.sh                      # this build, with and without the flag
#   BEFORE_BIN=OLD/anarchon bench/live_output.sh   # and another version without it: unchanged?
source "$(dirname "$0")/common.sh"
BIN="$BIN" python3 bench/live_output.py "$PORT"
