#!/usr/bin/env bash
# Server commands per run on `anarchon cron`'s warm connection, and what replicas standing by for
# a run in progress send per second (issue #49). See bench/per_run.py. About 2 minutes a binary.
#   bench/per_run.sh [BASELINE_BIN]: this tree's release build, after BASELINE_BIN if given.
#   FORMAT=2 (a format 2 store), JOBS=20 SECS=30 LOSER_SECS=12.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
python3 bench/per_run.py "$@" "$PWD/target/release/anarchon"
