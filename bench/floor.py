"""Script time per run against the layout floor, both store formats, measured in one run
(bench/floor.sh starts the server and passes its port and the build's scripts directory).

The floor (bench/floor/v1.lua, v2.lua) is a claim and a finish that do only what each format's
layout needs at steady state. For each format and history size, one job is filled by anarchon's
claim + finish and another by the floor's, to twice the history size (trimming and compaction at
their steady state); then rounds of 100 claim+finish pairs per side run in one pipeline, a pair of
one side then a pair of the other (so both see the same machine: a shared 2-core VM drifts by a
third from one second to the next, and stalls for milliseconds now and then). Each call's time is
its SLOWLOG duration at threshold 0 (the measure of INFO commandstats' usec, per call; both sides
are functions, FCALL, as the binary calls them on Redis 7+, so commandstats alone cannot tell them
apart). Per side and round, the mean of its calls; the median over rounds is reported, and the
ratio of the medians. `:state`'s (format 1) or `:results`' (format 2) MEMORY USAGE, encoding and
size are shown for each job.

Usage: floor.py PORT SCRIPTS_DIR. ROUNDS (default 15), HISTORIES (default "100 1000"),
FORMATS (default "1 2"); BEFORE=OTHER_SCRIPTS_DIR (another version's `cargo run --example
scripts` output) adds that version as a third side of every round: a before/after in one run.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
from resp import Redis, script_dirs  # noqa: E402

PORT, LUA = int(sys.argv[1]), sys.argv[2]
ROUNDS = int(os.environ.get("ROUNDS", "15"))
HISTORIES = [int(h) for h in os.environ.get("HISTORIES", "100 1000").split()]
FORMATS = [int(f) for f in os.environ.get("FORMATS", "1 2").split()]
HERE = os.path.dirname(os.path.abspath(__file__))
r = Redis(PORT)
NAMES = {1: ("state", "active", "slots", "runs", "results", "job"),
         2: ("live", "results", "job", "state", "active", "slots", "runs")}
RESULT = '{"duration_ms":3,"exit_code":0}'


def load(fmt):
    """(claim, finish) function names of anarchon's library and of the floor's, for `fmt`."""
    with open(os.path.join(script_dirs(LUA)[fmt], "library.lua")) as f:
        lib = r.cmd("FUNCTION", "LOAD", "REPLACE", f.read())
    with open(os.path.join(HERE, "floor", f"v{fmt}.lua")) as f:
        r.cmd("FUNCTION", "LOAD", "REPLACE", f.read())
    sides = {"anarchon": (f"{lib}_claim", f"{lib}_finish"),
             "floor": (f"floor_v{fmt}_claim", f"floor_v{fmt}_finish")}
    if os.environ.get("BEFORE"):
        with open(os.path.join(script_dirs(os.environ["BEFORE"])[fmt], "library.lua")) as f:
            before = r.cmd("FUNCTION", "LOAD", "REPLACE", f.read())
        sides["before"] = (f"{before}_claim", f"{before}_finish")
    return sides


def keys(fmt, job):
    return [f"{{cron:{job}}}:{k}" for k in NAMES[fmt]]


def pair(fmt, fns, job, slot, token, history):
    k = keys(fmt, job)
    fk = k[:6] if fmt == 1 else k
    return [["FCALL", fns[0], len(k), *k, slot, token, "host-a:12345", 30000, 3, 0, "scheduled",
             history, 0, 3600000],
            ["FCALL", fns[1], len(fk), *fk, slot, token, "finished", RESULT]]


def pairs_cmds(fmt, fns, job, first, n, history):
    cmds = []
    for i in range(first, first + n):
        cmds += pair(fmt, fns, job, 60_000 * (i + 1), f"tok{i:019d}", history)
    return cmds


def check(fns, replies):
    for k in range(0, len(replies), 2):
        assert isinstance(replies[k], list) and replies[k][0] == "won", (fns, replies[k])
        assert isinstance(replies[k + 1], list) and replies[k + 1][0] == "ok", (fns, replies[k + 1])


def run_pairs(fmt, fns, job, first, n, history):
    check(fns, r.pipeline(pairs_cmds(fmt, fns, job, first, n, history)))


def interleaved_round(fmt, sides, jobs, first, n, history):
    """n claim+finish pairs of each side, a pair of one then a pair of the other, in one pipeline;
    each call's time from SLOWLOG at threshold 0 (the measure of INFO commandstats' usec, per
    call): {side: (claim us, finish us, longest us)}."""
    names = list(sides)
    per_side = {side: pairs_cmds(fmt, sides[side], jobs[side], first, n, history) for side in names}
    cmds = []
    for k in range(0, 2 * n, 2):
        for side in names:
            cmds += per_side[side][k:k + 2]
    step = 2 * len(names)
    r.cmd("CONFIG", "SET", "slowlog-max-len", str(len(cmds) + 10))
    r.cmd("SLOWLOG", "RESET")
    r.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0")
    replies = r.pipeline(cmds)
    r.cmd("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    for j, side in enumerate(names):
        check(sides[side], [x for k in range(0, len(replies), step) for x in replies[k + 2 * j:k + 2 * j + 2]])
    durations = {}
    for e in r.cmd("SLOWLOG", "GET", len(cmds) + 10):
        if e[3][0].upper() == "FCALL":
            durations.setdefault(e[3][1], []).append(e[2])
    out = {}
    for side, fns in sides.items():
        c, f = durations[fns[0]], durations[fns[1]]
        out[side] = (statistics.mean(c), statistics.mean(f), max(c + f))
    return out


def state_info(fmt, job):
    k = keys(fmt, job)[0 if fmt == 1 else 1]
    return (r.cmd("MEMORY", "USAGE", k, "SAMPLES", 0), r.cmd("OBJECT", "ENCODING", k),
            r.cmd("HLEN" if fmt == 1 else "ZCARD", k))


def main():
    print(f"server: {r.cmd('INFO', 'server').split('redis_version:')[1].split()[0]}; scripts from {LUA}; "
          f"{ROUNDS} rounds of 100 claim+finish pairs per side, alternating")
    for fmt in FORMATS:
        sides = load(fmt)
        for history in HISTORIES:
            r.cmd("FLUSHALL")
            r.cmd("SET", "cron:format", fmt)
            jobs = {side: f"{side}{history}" for side in sides}
            # Filled to the history size, then as many again so that trimming and compaction are
            # at their steady state.
            for side, fns in sides.items():
                for b in range(0, 2 * history, 100):
                    run_pairs(fmt, fns, jobs[side], b, min(100, 2 * history - b), history)
            nxt = 2 * history
            rounds = []
            for _ in range(ROUNDS):
                rounds.append(interleaved_round(fmt, sides, jobs, nxt, 100, history))
                nxt += 100
            mem = {side: state_info(fmt, jobs[side]) for side in sides}

            def med(side, i):
                return statistics.median(x[side][i] for x in rounds)
            ratios = sorted((x["anarchon"][0] + x["anarchon"][1]) / (x["floor"][0] + x["floor"][1]) for x in rounds)
            a, f = med("anarchon", 0) + med("anarchon", 1), med("floor", 0) + med("floor", 1)
            print(f"format {fmt}, history {history}: claim+finish {a:.1f} us vs floor {f:.1f} us: {a / f:.2f}x "
                  f"(median round {ratios[len(ratios) // 2]:.2f}x, rounds {ratios[0]:.2f}-{ratios[-1]:.2f}x); "
                  f"claim {med('anarchon', 0):.1f} + finish {med('anarchon', 1):.1f} us "
                  f"vs floor {med('floor', 0):.1f} + {med('floor', 1):.1f} us "
                  f"(longest {max(x['anarchon'][2] for x in rounds)} vs {max(x['floor'][2] for x in rounds)} us); "
                  + (f"before {med('before', 0) + med('before', 1):.1f} us "
                     f"({(med('before', 0) + med('before', 1)) / f:.2f}x: claim {med('before', 0):.1f} + "
                     f"finish {med('before', 1):.1f}, {mem['before'][0]} B {mem['before'][1]}); "
                     if "before" in sides else "") +
                  f"{'state' if fmt == 1 else 'results'} {mem['anarchon'][0]} B {mem['anarchon'][1]} "
                  f"({mem['anarchon'][2]} entries) vs floor {mem['floor'][0]} B {mem['floor'][1]} ({mem['floor'][2]})")


main()
