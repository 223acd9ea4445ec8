#!/usr/bin/env bash
# Where the suite's time goes: one pass of the integration suite (tests/it) with every test's own
# duration, slowest first, written to bench/test-times.txt (what the next person compares with).
# Each test runs in a process of its own (cargo-nextest), THREADS at a time (default 4, as
# tests/setup-and-test.sh runs them), against Redis in store format 1 unless the usual variables
# say otherwise (ANARCHON_TEST_SERVER, ANARCHON_TEST_STORE_FORMAT).
#
# Usage: bench/test-times.sh [THREADS]
# Needs cargo-nextest (`cargo install cargo-nextest --locked`) and what the suite needs
# (tests/setup-and-test.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-4}
command -v cargo-nextest >/dev/null || { echo "cargo-nextest is missing: cargo install cargo-nextest --locked" >&2; exit 2; }
out=bench/test-times.txt
log=target/test-times.log
mkdir -p target
began=$(date +%s)
cargo nextest run --locked --test it --test-threads "$threads" --no-fail-fast \
  --status-level all --final-status-level none --hide-progress-bar >"$log" 2>&1 || true
took=$(( $(date +%s) - began ))
{
  echo "# bench/test-times.sh: one pass of tests/it, $threads at a time, each test in its own process"
  echo "# commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, server ${ANARCHON_TEST_SERVER:-redis-server}, store format ${ANARCHON_TEST_STORE_FORMAT:-1}"
  echo "# wall ${took} s; seconds, status, test (slowest first)"
  # nextest's lines: `        PASS [   1.234s] (12/460) anarchon::it deadlines::...`
  grep -E '^ +(PASS|FAIL|SIGSEGV|SIGABRT|TIMEOUT|LEAK) \[' "$log" \
    | sed -E 's/^ +([A-Z]+) \[ *([0-9.]+)s\]( \([0-9/ ]+\))? +[^ ]+ +(.*)$/\2 \1 \4/' \
    | sort -k1,1 -g -r
} >"$out"
echo "$out: $(($(wc -l <"$out") - 3)) tests, wall ${took} s; the slowest:"
sed -n 4,33p "$out"
