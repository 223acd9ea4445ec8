#!/usr/bin/env bash
# Server cost of anarchon's scripts, measured inside Redis (INFO commandstats, SLOWLOG, MEMORY
# USAGE), each figure with its same-run baseline and the ratio. See bench/server.py.
#   bench/server.sh            # the scripts this build sends (cargo run --example scripts)
#   bench/server.sh OLD/lua    # another version's lua/ directory, for a before/after
#   LOOK=0 bench/server.sh OLD/scripts   # a version before the claim's look (its `cargo run
#                              # --example scripts` output): every herd claim a script
#   ONLY=steady|herd|paths, ROUNDS=N, EVALSHA=1: one part, more rounds, scripts instead of functions
#   QUICK=1 bench/server.sh    # smaller sizes, for a quick look
#   BEFORE_BIN=OLD/anarchon BEFORE_SCRIPTS=OLD/scripts bench/server.sh   # the formats part adds
#                              # that version's format 1 to every round (README's before/after)
source "$(dirname "$0")/common.sh"
# ANARCHON_BIN: another build of the binary (a before/after of the operator paths).
cargo run --release --quiet --example scripts -- "$WORK/scripts"
BIN="${ANARCHON_BIN:-$BIN}" python3 bench/server.py "$PORT" "${1:-$WORK/scripts}"
# Store formats 1 and 2 side by side (README, "Store formats: which to use").
BIN="${ANARCHON_BIN:-$BIN}" python3 bench/formats.py "$PORT" "${1:-$WORK/scripts}"
