"""Store formats 1 and 2 side by side, on one server, interleaved (bench/server.sh runs it): the
figures of README "Store formats: which to use", each against a baseline measured in the same run.

- memory per run of history: an every-minute job whose slots are the last 400 minutes, each run
  claimed and finished by the build's scripts as `anarchon run` does (keep-claimable 1 h, history
  1000), then MEMORY USAGE of each key / 400;
- script time per run: `anarchon run --slot S -- true`, each its own process as in a fleet, the
  server's usec for FCALL/EVALSHA/EVAL (INFO commandstats) per run, against two empty EVALSHA
  each sent by its own `redis-cli` process;
- server CPU per run: the server's main thread CPU (INFO cpu) over the same runs, against
  `redis-cli SET k v NX PX 30000` and `redis-cli DEL k`, each its own process.
Rounds alternate the formats and the baselines; the median round is reported.

Usage: formats.py PORT SCRIPTS_DIR (the build's scripts, `cargo run --example scripts`).
BEFORE_BIN and BEFORE_SCRIPTS (another version's binary and `cargo run --example scripts` output)
add that version's format 1 to every round, interleaved: a before/after in one run."""
import os
import statistics
import subprocess
import sys

sys.argv = [sys.argv[0], sys.argv[1], sys.argv[2]]
PORT, LUA = int(sys.argv[1]), sys.argv[2]
BIN = os.environ.get("BIN", "target/release/anarchon")
ROUNDS = int(os.environ.get("ROUNDS", "5"))
RUNS = int(os.environ.get("RUNS", "40"))
# The length of the tokens the memory part writes (anarchon's own: 22 base 62 digits).
TOKEN_LEN = int(os.environ.get("TOKEN_LEN", "22"))

sys.path.insert(0, os.path.dirname(__file__))
from resp import Redis, script_dirs  # noqa: E402

r = Redis(PORT)
NAMES = {1: ("state", "active", "slots", "runs", "results", "job"),
         2: ("live", "results", "job", "state", "active", "slots", "runs")}


def load(fmt, lua=LUA):
    """The claim and finish of `fmt` in the scripts directory `lua` (the build's by default), as
    functions where the server has them."""
    base = script_dirs(lua)[fmt]
    name = None
    # An earlier version's format 1 scripts have no library: they run by EVALSHA, as it ran them.
    if os.path.exists(os.path.join(base, "library.lua")):
        with open(os.path.join(base, "library.lua")) as f:
            name = r.cmd("FUNCTION", "LOAD", "REPLACE", f.read())
    if isinstance(name, RuntimeError) or name is None:
        shas = [r.cmd("SCRIPT", "LOAD", open(os.path.join(base, s)).read()) for s in ("claim.lua", "finish.lua")]
        return "EVALSHA", shas[0], shas[1]
    return "FCALL", f"{name}_claim", f"{name}_finish"


SCRIPTS = {fmt: load(fmt) for fmt in (1, 2)}
# What each measured column runs: its format, its scripts (as load() returns them) and its binary.
COLUMNS = {1: (1, SCRIPTS[1], BIN), 2: (2, SCRIPTS[2], BIN)}
if os.environ.get("BEFORE_BIN") and os.environ.get("BEFORE_SCRIPTS"):
    COLUMNS["before"] = (1, load(1, os.environ["BEFORE_SCRIPTS"]), os.environ["BEFORE_BIN"])


def keys(prefix, fmt, job):
    return [f"{{{prefix}{job}}}:{k}" for k in NAMES[fmt]]


def seed(prefix, column, job, runs, before=0):
    """`runs` finished runs of an every-minute job, oldest first, the newest `before` minutes
    before this minute's slot, each claimed and finished by the column's scripts as `anarchon run`
    does (keep-claimable 1 h, history 1000)."""
    fmt, (verb, claim, finish), _ = COLUMNS[column]
    r.cmd("SET", f"{prefix}format", fmt)
    now = int(r.cmd("TIME")[0]) * 1000
    minute = now - now % 60000
    k = keys(prefix, fmt, job)
    finish_keys = k[:6] if fmt == 1 else k
    for i in range(runs + before, before, -1):
        slot, token = minute - 60000 * i, f"{i:032x}"[-TOKEN_LEN:]
        rep = r.pipeline([[verb, claim, len(k), *k, slot, token, "host-a:12345", 30000, 3, 0, "scheduled", 1000, 0, 3600000],
                          [verb, finish, len(finish_keys), *finish_keys, slot, token, "finished",
                           '{"duration_ms":3,"exit_code":0}']])
        assert rep[0][0] == "won", rep
    return k


def seed_every_minute(column, runs=400):
    """Memory per run of an every-minute job whose slots are the last `runs` minutes."""
    k = seed(f"mem{column}:", column, "job", runs)
    return {name.split(":")[-1]: (r.cmd("MEMORY", "USAGE", name, "SAMPLES", 0) or 0) / runs for name in k}


def stats():
    info = r.cmd("INFO", "commandstats")
    calls, usec = {}, {}
    for line in info.splitlines():
        if line.startswith("cmdstat_"):
            name, rest = line[len("cmdstat_"):].split(":", 1)
            fields = dict(kv.split("=") for kv in rest.split(","))
            calls[name], usec[name] = int(fields["calls"]), int(fields["usec"])
    cpu = dict(line.split(":", 1) for line in r.cmd("INFO", "cpu").split() if ":" in line)
    main = float(cpu.get("used_cpu_user_main_thread", cpu["used_cpu_user"])) + \
        float(cpu.get("used_cpu_sys_main_thread", cpu["used_cpu_sys"]))
    scripts = sum(usec.get(n, 0) for n in ("fcall", "evalsha", "eval", "fcall_ro", "evalsha_ro"))
    return scripts, main * 1e6


def measure(run_one, n):
    """Script usec and server CPU usec per call of run_one over n calls."""
    s0, c0 = stats()
    for i in range(n):
        run_one(i)
    s1, c1 = stats()
    return (s1 - s0) / n, (c1 - c0) / n


def quiet(args):
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


EMPTY = r.cmd("SCRIPT", "LOAD", "return 0")
CLI = ["redis-cli", "-p", str(PORT)]


def fleet_round(column, k, before_runs=None):
    """RUNS `anarchon run` processes of a job whose history is full (1,000 runs): each claim
    trims and compacts as a fleet's steady state does. `before_runs` is called once the history
    is in place, before the first process."""
    prefix = f"fleet{column}:"
    seed(prefix, column, f"r{k}", 1000, before=RUNS)
    bin = COLUMNS[column][2]
    env = dict(os.environ, ANARCHON_REDIS_URL=f"redis://127.0.0.1:{PORT}")
    now = int(r.cmd("TIME")[0]) * 1000
    minute = now - now % 60000

    def one(i):
        subprocess.run([bin, "run", "--prefix", prefix, "--job", f"r{k}", "--slot", str(minute - 60000 * (RUNS - i)),
                        "--max-late", "1h", "--", "true"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
    if before_runs:
        before_runs()
    return measure(one, RUNS)


def floor_round():
    script, _ = measure(lambda i: (quiet(CLI + ["EVALSHA", EMPTY, "0"]), quiet(CLI + ["EVALSHA", EMPTY, "0"])), RUNS)
    _, cpu = measure(lambda i: (quiet(CLI + ["SET", f"lock{i}", "v", "NX", "PX", "30000"]),
                                quiet(CLI + ["DEL", f"lock{i}"])), RUNS)
    return script, cpu


def commands():
    """Where the script time of one `run -- true` goes: each command's usec per run, inside the
    scripts and out (INFO commandstats counts a script's own commands too), per format."""
    for fmt in (1, 2):
        fleet_round(fmt, f"calls{os.getpid()}", before_runs=lambda: r.cmd("CONFIG", "RESETSTAT"))
        rows = []
        for line in r.cmd("INFO", "commandstats").splitlines():
            if line.startswith("cmdstat_"):
                name, rest = line[len("cmdstat_"):].split(":", 1)
                f = dict(kv.split("=") for kv in rest.split(","))
                rows.append((int(f["usec"]) / RUNS, int(f["calls"]) / RUNS, name))
        rows = [x for x in rows if not x[2].startswith(("config", "info"))]
        print(f"format {fmt}: " + ", ".join(f"{n} {c:.1f}x {u:.1f}us" for u, c, n in sorted(rows, reverse=True)))


def main():
    if os.environ.get("ONLY") == "commands":
        return commands()
    if os.environ.get("ONLY") == "memory":
        for fmt in (1, 2):
            m = seed_every_minute(fmt, int(os.environ.get("HISTORY", "400")))
            print(f"format {fmt}: {sum(m.values()):.0f} B per run: " + ", ".join(f"{k} {v:.0f}" for k, v in m.items() if v))
        return
    print(f"server: {r.cmd('INFO', 'server').split('redis_version:')[1].split()[0]}; "
          f"{ROUNDS} rounds of {RUNS} `anarchon run` processes per format, interleaved with the baselines")
    columns = [c for c in ("before", 1, 2) if c in COLUMNS]
    names = {"before": "format 1, BEFORE_BIN", 1: "format 1", 2: "format 2"}
    rounds = {c: [] for c in columns}
    for k in range(ROUNDS):
        floor_script, floor_cpu = floor_round()
        for c in columns:
            script, cpu = fleet_round(c, k)
            rounds[c].append((script / floor_script, cpu / floor_cpu, script, cpu, floor_script, floor_cpu))
    memory = {c: seed_every_minute(c) for c in columns}
    print("| per `run -- true` | " + " | ".join(names[c] for c in columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    print("| memory per run of history (every-minute job, slots the last 400 minutes) | "
          + " | ".join(f"{sum(memory[c].values()):.0f} B" for c in columns) + " |")
    print("|   by key | " + " | ".join(", ".join(f"{k} {v:.0f}" for k, v in memory[c].items() if v) for c in columns) + " |")

    def med(c, i):
        return statistics.median(x[i] for x in rounds[c])
    print("| script time per run vs two empty EVALSHA, each its own process | "
          + " | ".join(f"{med(c, 0):.1f}x ({med(c, 2):.1f} us)" for c in columns) + " |")
    print("| server CPU per run vs redis-cli SET NX PX + redis-cli DEL | "
          + " | ".join(f"{med(c, 1):.2f}x ({med(c, 3):.0f} us)" for c in columns) + " |")
    print(f"(baselines, median: two empty EVALSHA {statistics.median(x[4] for x in rounds[1]):.1f} us of script time; "
          f"SET NX PX + DEL {statistics.median(x[5] for x in rounds[1]):.0f} us of server CPU; rounds: "
          + "; ".join(f"{names[c]}: " + ", ".join(f"{x[0]:.1f}x/{x[1]:.2f}x" for x in rounds[c]) for c in columns) + ")")


main()
