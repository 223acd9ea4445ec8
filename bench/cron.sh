#!/usr/bin/env bash
# `anarchon cron` under load (issue #38): the server time per run on the daemons' warm
# connection in both store formats, against two warm empty script calls measured in the same run;
# then 1,000 every-minute jobs in three replicas (how late runs start, idle CPU, RSS, the server's
# PING p99 in the minute's herd against idle). See bench/cron.py. About 4 minutes.
#   JOBS=40 SECS=20 HERD=1000 bench/cron.sh; SKIP_HERD=1 (the first part only), SKIP_STEADY=1 (the herd only)
source "$(dirname "$0")/common.sh"
python3 bench/cron.py "$PORT" "$BIN"
