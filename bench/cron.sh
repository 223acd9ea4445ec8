#!/usr/bin/env bash
# `anarchon cron` under load (issues #38, #49): the server time per run on the daemons' warm
# connection in both store formats, against two warm empty script calls measured in the same run;
# then 1,000 every-minute jobs in three replicas: fire-to-start p50/p99/max (against the machine's
# floor: the same commands started by one small process), the share of the herd per replica, the
# server's PING p99 in the 10 s after the minute against idle, each replica's RSS and CPU. See
# bench/cron.py. About 4 minutes, 2 more for a baseline.
#   JOBS=40 SECS=20 HERD=1000 bench/cron.sh; SKIP_HERD=1 (the first part only), SKIP_STEADY=1 (the herd only)
#   BASE_BIN=PATH: the herd with a baseline binary first, in the same run, e.g. of commit e1700f1:
#     git worktree add --detach /tmp/base e1700f1 && (cd /tmp/base && cargo build --release --target-dir /tmp/base/target)
#     BASE_BIN=/tmp/base/target/release/anarchon SKIP_STEADY=1 bench/cron.sh
source "$(dirname "$0")/common.sh"
python3 bench/cron.py "$PORT" "$BIN"
