#!/usr/bin/env python3
"""Writes RESP for `redis-cli --pipe`: JOBS jobs with RUNS finished runs each, through the real
claim and finish scripts (EVALSHA CLAIM_SHA / FINISH_SHA, loaded beforehand with SCRIPT LOAD)."""
import sys

claim_sha, finish_sha, jobs, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prefix = sys.argv[5] if len(sys.argv) > 5 else "bench"
out = sys.stdout.buffer


def cmd(*args):
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        a = str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    out.write(b"".join(parts))


for j in range(jobs):
    name = f"{prefix}{j:05d}" if jobs > 1 else prefix
    keys = [f"{{cron:{name}}}:{s}" for s in ("state", "active", "slots", "runs", "results", "job")]
    for r in range(runs):
        slot, token = 1_000_000 + r * 60_000, f"t{r}"
        cmd("EVALSHA", claim_sha, 6, *keys, slot, token, f"host:{r}", 30000, 3, 1, "scheduled", 100000, 0, 3600000)
        cmd("EVALSHA", finish_sha, 5, *keys[:5], slot, token, "finished", '{"exit_code":0}')
