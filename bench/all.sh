#!/usr/bin/env bash
# Every benchmark, each reporting ratios against a baseline measured in the same run.
set -euo pipefail
cd "$(dirname "$0")"
echo "== claim";    ./claim.sh "${1:-300}"
echo "== run";      ./run.sh "${1:-300}"
echo "== operator"; ./operator.sh 10000 1000 5
echo "== server";   ./server.sh
echo "== trace";    ./trace.sh 100
echo "== page";     ./page.sh 1000 10
