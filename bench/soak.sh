#!/usr/bin/env bash
# The randomized fault soak of tests/it/soak.rs, run longer: several hosts run one crontab line through
# their own fault relays while a nemesis mixes kill -9, SIGSTOP, reply delays, black holes,
# partitions, CLIENT PAUSE, a full Redis (OOM), `release`, pauses, outages, and SIGTERM and rolling
# deploys of replicas (each renames the job, `--was` its old names, and edits its line); the
# checker (tests/it/common/runs.rs) reports two copies at once (each copy by its own pid, whatever
# its labels), slots run more than once (one after the other), slots left
# without an ended attempt, defects (a run after a recorded end, a copy under a skip, a skip whose
# reason is untrue, a record no copy backs), and every due slot's end: ran, decided by a record one
# host alone would write, lost, or lost to faults (every allowed attempt ended while a fault the
# soak dealt held its host; monitoring must report those too), for each store format.
#
# Usage: bench/soak.sh [SECONDS] [HOSTS] [SEED] [BASELINE_BINARY]
#   SECONDS  chaos per store format (default 600), then a 9 s quiet spell
#   HOSTS    hosts running the crontab line (default 3)
#   SEED     the nemesis's seed (default 1): the same seed deals the same faults at the same times
#   BASELINE_BINARY  another anarchon binary to soak in the same run first (e.g. the previous
#            release, built into another target dir), for a before/after in one run
# AS=run,cron,mixed picks how the hosts run the job (default all three): cron starting `anarchon
# run` at every tick, replicas of `anarchon cron` (killed -9 and started again, stopped, cut off,
# and shut down by SIGTERM as in a rolling deploy), or both sharing the job.
# FORMATS=1,2 picks the store formats (default both); OVERLAPS=forbid,replace,buffer the crontab
# line's --overlap policies (default all three; replace and buffer run 4 s commands every 3 s, so
# that every slot meets a run in progress). Reports, never fails. When a soak loses a run or runs
# two copies, the hosts' stderr and the command's log are kept under target/soak/ (or
# $ANARCHON_SOAK_KEEP_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_FORMAT=${1:-600}
HOSTS=${2:-3}
SEED=${3:-1}
BASELINE=${4:-}
FORMATS=${FORMATS:-1,2}
OVERLAPS=${OVERLAPS:-forbid,replace,buffer}
AS=${AS:-run,cron,mixed}

cargo build --release --quiet --bin anarchon
soak() { # label binary format overlap hosts
  local label=$1 binary=$2 format=$3 overlap=$4 hosts=$5 run_ms=2000
  [ "$overlap" = forbid ] || run_ms=4000
  echo "== $label, store format $format, --overlap $overlap, hosts as $hosts"
  ANARCHON_SOAK_AS=$hosts ANARCHON_SOAK_OVERLAP=$overlap ANARCHON_SOAK_RUN_MS=$run_ms ANARCHON_SOAK_SECS=$SECONDS_PER_FORMAT ANARCHON_SOAK_HOSTS=$HOSTS ANARCHON_SOAK_SEED=$SEED \
    ANARCHON_SOAK_REPORT_ONLY=1 ANARCHON_TEST_STORE_FORMAT=$format ANARCHON_SOAK_BINARY=$binary \
    ANARCHON_SOAK_KEEP_DIR=${ANARCHON_SOAK_KEEP_DIR:-target/soak} \
    cargo test --release --quiet --test it -- soak:: --nocapture 2>&1 \
    | awk '/soak: / { sub(/^.*soak: /, "soak: "); shown = 1; print; next } shown && /^  / { print; next } { shown = 0 }'
}
for format in ${FORMATS//,/ }; do
  for overlap in ${OVERLAPS//,/ }; do
    for hosts in ${AS//,/ }; do
      [ -z "$BASELINE" ] || soak "baseline $BASELINE" "$(realpath "$BASELINE")" "$format" "$overlap" "$hosts"
      soak "this build" "$(realpath target/release/anarchon)" "$format" "$overlap" "$hosts"
    done
  done
done
