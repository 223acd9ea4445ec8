"""Server cost of anarchon's scripts, measured inside Redis, each figure against a baseline
measured in the same run (see bench/server.sh, which starts the server and passes its port).

- CPU per claim and finish at steady state (history full, so each claim trims one run), from
  SLOWLOG with a threshold of 0 (per script) and INFO commandstats (per call), at two history
  sizes; against two EVALSHA of an empty script and against SET NX PX + DEL.
- The longest single script of every path (SLOWLOG), including anarchon's own trim and trim
  --dry-run of a job with 100,000 runs, list, inspect, history and catch-up (run as processes).
- A thundering herd: 1,000 jobs x 5 claimants pipelined from 5 clients while another client PINGs;
  its p99 and max latency, and the server's CPU for the burst (INFO cpu), against the same burst of
  SET NX PX. Each claimant sends what `anarchon run` sends at a slot: the format check with the
  registry's read, the claim's look, then the claim script where the look does not answer (LOOK=0:
  the format check, the registry script and the claim script, as versions before the look did).
- Memory per run of history at 1,000 runs per job, per key (MEMORY USAGE), and per job with one run
  against a SET-based lock.

Plain sockets and RESP, so it needs nothing but Python: this is a benchmark, not product code.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

PORT = int(sys.argv[1])
LUA = sys.argv[2] if len(sys.argv) > 2 else "lua"
BIN = os.environ.get("BIN", "target/release/anarchon")
QUICK = os.environ.get("QUICK") == "1"


sys.path.insert(0, os.path.dirname(__file__))
from resp import Redis as _Redis, script_dirs  # noqa: E402


def Redis():
    return _Redis(PORT)


# Store format 2 (lua/lease/v2/) when the scripts have it, else format 1 (an older version's lua/).
DIRS = script_dirs(LUA)
FORMAT = 2 if os.path.exists(os.path.join(DIRS[2], "claim.lua")) else 1
SCRIPTS = DIRS[FORMAT]


def lua(name):
    # Scripts as the binary sends them (`anarchon scripts --dir`, what bench/server.sh passes by
    # default): used whole. An older version's lua/ directory: its library and the script.
    if not os.path.exists(os.path.join(SCRIPTS, "lib.lua")):
        with open(os.path.join(SCRIPTS, name)) as f:
            return f.read()
    with open(os.path.join(SCRIPTS, "lib.lua")) as f:
        lib = f.read()
    # Both formats' scripts include lua/lease/pause.lua and lua/lease/released.lua after their library, where
    # they exist.
    for shared in ("pause.lua", "released.lua"):
        if os.path.exists(os.path.join(DIRS["shared"], shared)):
            with open(os.path.join(DIRS["shared"], shared)) as f:
                lib += "\n" + f.read()
    with open(os.path.join(SCRIPTS, name)) as f:
        return lib + "\n" + f.read()


r = Redis()
CLAIM = r.cmd("SCRIPT", "LOAD", lua("claim.lua"))
FINISH = r.cmd("SCRIPT", "LOAD", lua("finish.lua"))
# Format 2's lease scripts run as Redis Functions where the server has them, as the binary runs
# them (src/scripts.rs, FunctionLibrary); EVALSHA=1 measures them as scripts instead.
VERB = "EVALSHA"
LIBRARY = os.path.join(SCRIPTS, "library.lua")
if FORMAT == 2 and os.path.exists(LIBRARY) and os.environ.get("EVALSHA") != "1":
    with open(LIBRARY) as f:
        loaded = r.cmd("FUNCTION", "LOAD", "REPLACE", f.read())
    if not isinstance(loaded, RuntimeError):
        VERB, CLAIM, FINISH = "FCALL", f"{loaded}_claim", f"{loaded}_finish"
EMPTY = r.cmd("SCRIPT", "LOAD", "return 0")
# Every script anarchon may run, loaded once as a server that has seen them would have them: a
# script's first EVAL also compiles it, a one-off cost that is not what these figures are about.
for extra in ("trim.lua", "heartbeat.lua"):
    if os.path.exists(os.path.join(SCRIPTS, extra)):
        r.cmd("SCRIPT", "LOAD", lua(extra))
r.cmd("SET", "cron:format", str(FORMAT))
# What `anarchon run -- true` records as its result: since format 2's version, only what is not
# already in the member or at its default.
if FORMAT == 1:
    RESULT = json.dumps({"attempt": 1, "duration_ms": 3, "exit_code": 0, "lease_lost": False,
                         "runner": "host-a:12345", "signal": None, "spawn_error": None,
                         "stderr_tail": "", "timed_out": False}, separators=(",", ":"), sort_keys=True)
else:
    RESULT = json.dumps({"duration_ms": 3, "exit_code": 0}, separators=(",", ":"))


NAMES = {1: ("state", "active", "slots", "runs", "results", "job"),
         2: ("live", "results", "job", "state", "active", "slots", "runs")}[FORMAT]


def keys(job):
    return [f"{{cron:{job}}}:{k}" for k in NAMES]


def key(job, name):
    return f"{{cron:{job}}}:{name}"


def claim_cmd(job, slot, token, history, runner="host-a:12345", overlap=0):
    return [VERB, CLAIM, len(NAMES), *keys(job), slot, token, runner, 30000, 3, overlap,
            "scheduled", history, 0, 3600000]


def finish_cmd(job, slot, token):
    finish_keys = keys(job)[:5] if FORMAT == 1 else keys(job)
    return [VERB, FINISH, len(finish_keys), *finish_keys, slot, token, "finished", RESULT]


def check(replies):
    errors = [x for x in replies if isinstance(x, RuntimeError)]
    if errors:
        raise errors[0]
    return replies


def commandstats():
    info = r.cmd("INFO", "commandstats")
    out = {}
    for line in info.splitlines():
        if line.startswith("cmdstat_"):
            name, rest = line[len("cmdstat_"):].split(":", 1)
            fields = dict(kv.split("=") for kv in rest.split(","))
            out[name] = (int(fields["calls"]), int(fields["usec"]))
    return out


def usec_per_call(name, before, after):
    calls = after.get(name, (0, 0))[0] - before.get(name, (0, 0))[0]
    usec = after.get(name, (0, 0))[1] - before.get(name, (0, 0))[1]
    return usec / calls if calls else 0.0


def seed(job, runs, history):
    """`runs` finished runs of `job`, oldest first, slots a minute apart in 1970 (never protected)."""
    batch = []
    for i in range(runs):
        slot, token = 60_000 * (i + 1), f"seed{i:08d}"
        batch += [claim_cmd(job, slot, token, history), finish_cmd(job, slot, token)]
        if len(batch) >= 2000:
            check(r.pipeline(batch))
            batch = []
    if batch:
        check(r.pipeline(batch))


def floor():
    r.cmd("CONFIG", "RESETSTAT")
    before = commandstats()
    for _ in range(10):
        check(r.pipeline([["EVALSHA", EMPTY, 0] for _ in range(200)]))
    after = commandstats()
    empty = usec_per_call("evalsha", before, after)
    before = after
    for b in range(10):
        cmds = []
        for i in range(200):
            cmds += [["SET", f"lock:{b}:{i}", "me", "NX", "PX", 30000], ["DEL", f"lock:{b}:{i}"]]
        check(r.pipeline(cmds))
    after = commandstats()
    setdel = usec_per_call("set", before, after) + usec_per_call("del", before, after)
    return 2 * empty, setdel


def slowlog_scripts(threshold_us=0):
    entries = r.cmd("SLOWLOG", "GET", 1_000_000)
    out = {}
    for e in entries:
        duration, args = e[2], e[3]
        name = args[0].upper() + (" " + args[1] if args[0].upper() in ("EVALSHA", "FCALL") else "")
        out.setdefault(name, []).append(duration)
    return out


def steady_state(history, pairs):
    """Claim + finish at steady state (history full), interleaved with the floor: batches of 100
    claim+finish pairs alternate with batches of 200 empty scripts, so both see the same machine
    (a shared 2-core VM drifts by a third from one second to the next). Per-call durations come
    from SLOWLOG at threshold 0: the same measure as INFO commandstats' usec, per script."""
    job = f"steady{history}"
    seed(job, history, history)
    r.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.cmd("CONFIG", "SET", "slowlog-max-len", str(2 * pairs + 200 * (pairs // 100) + 100))
    r.cmd("SLOWLOG", "RESET")
    base = 60_000 * (history + 10)
    for b in range(0, pairs, 100):
        cmds = []
        for i in range(b, min(b + 100, pairs)):
            slot, token = base + 60_000 * i, f"run{i:08d}"
            cmds += [claim_cmd(job, slot, token, history), finish_cmd(job, slot, token)]
        replies = check(r.pipeline(cmds))
        assert all(replies[k][0] == "won" for k in range(0, len(replies), 2)), replies[:2]
        check(r.pipeline([["EVALSHA", EMPTY, 0] for _ in range(200)]))
    log = slowlog_scripts()
    r.cmd("CONFIG", "SET", "slowlog-log-slower-than", "1000")
    claims = log.get(f"{VERB} {CLAIM}", [])
    finishes = log.get(f"{VERB} {FINISH}", [])
    empties = log.get(f"EVALSHA {EMPTY}", [])
    runs_left = r.cmd("ZCARD", key(job, "slots" if FORMAT == 1 else "results"))
    return {
        "floor_us": 2 * statistics.mean(empties),
        "pair_us": statistics.mean(claims) + statistics.mean(finishes),
        "claim_us": statistics.mean(claims),
        "finish_us": statistics.mean(finishes),
        "max_us": max(claims + finishes),
        # The same run's longest empty script: a stall of the VM shows here too.
        "max_empty_us": max(empties),
        "runs_kept": runs_left,
    }


PINGER = """
import json, select, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
print("ready", flush=True)
recording, out = False, []
while True:
    if select.select([sys.stdin], [], [], 0)[0]:
        word = sys.stdin.readline().strip()
        if word == "start":
            recording = True
        else:
            print(json.dumps(out), flush=True)
            break
    t = time.perf_counter()
    s.sendall(b"PING\\r\\n")
    buf = b""
    while not buf.endswith(b"\\r\\n"):
        buf += s.recv(64)
    if recording:
        out.append((time.perf_counter() - t) * 1e6)
"""


# What `anarchon run` records in the job registry (src/store/registry.rs), as the herd's hosts send it.
REGISTRY = [("schedule", "* * * * *"), ("tz", "UTC"), ("strategy", "lease"), ("lease_ms", ""),
            ("max_attempts", ""), ("max_late_ms", "60000"), ("catch_up_ms", "0"),
            ("catch_up_policy", "all"), ("jitter_ms", "0"), ("overlap", "forbid"), ("version", "bench")]
REGISTER = r.cmd("SCRIPT", "LOAD", open(os.path.join(DIRS["store"], "register.lua")).read()) \
    if os.path.exists(os.path.join(DIRS["store"], "register.lua")) else None
# LOOK=0: claims as versions before the look sent them (every host runs the registry script and the
# claim script); default: as this version does (plain reads first, scripts only when they decide).
LOOK = FORMAT == 2 and os.environ.get("LOOK") != "0"


def register_cmd(job, host):
    args = [host, 600000] + [x for pair in REGISTRY for x in pair]
    return ["EVALSHA", REGISTER, 1, f"{{cron:{job}}}:registry", *args]


def registry_look(job, host):
    return [["HMGET", f"{{cron:{job}}}:registry", *[name for name, _ in REGISTRY], f"host:{host}"]]


def claim_look(job, slot):
    return [["HGET", key(job, "live"), slot], ["TIME"]]


def look_answers(live, time, token):
    """Whether a claim's look answers it (src/strategy/lease/look.rs): held by another, lease live."""
    if live is None:
        return False
    run = json.loads(live)
    return run["token"] != token and run["lease_end"] > int(time[0]) * 1000 + int(time[1]) // 1000


def server_cpu_us():
    """CPU time of the server's main thread (INFO cpu; the whole process before Redis 6.2), us:
    what the burst cost the server, commands, parsing and sockets included, the pinger's too."""
    info = dict(line.split(":", 1) for line in r.cmd("INFO", "cpu").split() if ":" in line)
    user = info.get("used_cpu_user_main_thread", info["used_cpu_user"])
    system = info.get("used_cpu_sys_main_thread", info["used_cpu_sys"])
    return (float(user) + float(system)) * 1e6


def herd(batch, claimants=5, jobs=1000, use_lock=False):
    """One burst. Returns the pinger's p99 and max latency (us), its sample count, and the server's
    own time for the burst's commands (INFO commandstats, all commands, us)."""
    slot = 1_796_220_300_000 + (1 if use_lock else 0)

    # The pinger is another process: a thread would wait for the claimants' GIL, not for Redis.
    ping = subprocess.Popen([sys.executable, "-c", PINGER, str(PORT)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    ping.stdout.readline()  # "ready"

    # Each claimant stands for a host that claims its jobs over one connection, `batch` at a time
    # in one pipeline (1: as `anarchon run` does, one process and one claim in flight per job; 10:
    # a scheduler instance that pipelines the claims of a minute). Each sends what `anarchon run`
    # sends at a slot before its command starts: the format check with the registry's read, the
    # claim's look, and the claim script where the look does not answer (LOOK=0: the format
    # check, the registry script and the claim script, as before the look).
    def claimant(c):
        conn = Redis()
        host = f"host-{c}"
        for b in range(0, jobs, batch):
            batch_jobs = range(b, b + batch)
            if use_lock:
                check(conn.pipeline([["SET", f"lock:herd{j}:{slot}", f"c{c}", "NX", "PX", 30000]
                                     for j in batch_jobs]))
                continue
            tokens = {j: f"tok{c}-{j}" for j in batch_jobs}
            # The first round trip of every `run`: the format check (and, with the look, the
            # registry's read).
            first = [["SET", "cron:format", FORMAT, "NX"], ["GET", "cron:format"], ["TIME"]]
            if not LOOK:
                check(conn.pipeline([cmd for j in batch_jobs for cmd in first]))
                if REGISTER:
                    check(conn.pipeline([register_cmd(f"herd{j}", host) for j in batch_jobs]))
                check(conn.pipeline([claim_cmd(f"herd{j}", slot, tokens[j], 1000, runner=f"{host}:1")
                                     for j in batch_jobs]))
                continue
            check(conn.pipeline([cmd for j in batch_jobs for cmd in first + registry_look(f"herd{j}", host)]))
            replies = check(conn.pipeline([cmd for j in batch_jobs for cmd in claim_look(f"herd{j}", slot)]))
            left = [j for k, j in enumerate(batch_jobs)
                    if not look_answers(replies[2 * k], replies[2 * k + 1], tokens[j])]
            if left:
                check(conn.pipeline([claim_cmd(f"herd{j}", slot, tokens[j], 1000, runner=f"{host}:1")
                                     for j in left]))

    threads = [threading.Thread(target=claimant, args=(c,)) for c in range(claimants)]
    before = commandstats()
    cpu_before = server_cpu_us()
    ping.stdin.write("start\n")
    ping.stdin.flush()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ping.stdin.write("stop\n")
    ping.stdin.flush()
    during = sorted(json.loads(ping.stdout.readline())) or [0.0]
    ping.wait()
    after = commandstats()
    busy = server_cpu_us() - cpu_before
    scripts = sum(after.get(n, (0, 0))[0] - before.get(n, (0, 0))[0] for n in ("fcall", "evalsha"))
    p99 = during[min(len(during) - 1, int(len(during) * 0.99))]
    return p99, during[-1], len(during), busy, scripts


def memory_per_run(runs=1000):
    job = "mem"
    seed(job, runs, runs)
    per_key = {}
    for k in keys(job):
        per_key[k.split(":")[-1]] = (r.cmd("MEMORY", "USAGE", k, "SAMPLES", 0) or 0) / runs
    return per_key


def memory_per_job(jobs):
    r.cmd("FLUSHALL")
    r.cmd("SET", "cron:format", str(FORMAT))
    base = int(dict(l.split(":", 1) for l in r.cmd("INFO", "memory").splitlines()
                    if ":" in l)["used_memory"])
    batch = []
    for j in range(jobs):
        batch += [claim_cmd(f"one{j}", 60_000, f"t{j}", 1000), finish_cmd(f"one{j}", 60_000, f"t{j}")]
        if len(batch) >= 2000:
            check(r.pipeline(batch))
            batch = []
    check(r.pipeline(batch))
    used = int(dict(l.split(":", 1) for l in r.cmd("INFO", "memory").splitlines()
                    if ":" in l)["used_memory"])
    anarchon = (used - base) / jobs
    r.cmd("FLUSHALL")
    base = int(dict(l.split(":", 1) for l in r.cmd("INFO", "memory").splitlines()
                    if ":" in l)["used_memory"])
    for b in range(0, jobs, 1000):
        check(r.pipeline([["SET", f"lock:one{j}", "host-a:12345", "PX", 3600000]
                          for j in range(b, min(b + 1000, jobs))]))
    used = int(dict(l.split(":", 1) for l in r.cmd("INFO", "memory").splitlines()
                    if ":" in l)["used_memory"])
    return anarchon, (used - base) / jobs


def anarchon(*args):
    env = dict(os.environ, ANARCHON_REDIS_URL=f"redis://127.0.0.1:{PORT}")
    return subprocess.run([BIN, *args], env=env, capture_output=True, text=True)


def longest_scripts_of_operator_paths(runs):
    """Seeds a job with `runs` runs, then runs every operator path with SLOWLOG at 1 ms."""
    r.cmd("FLUSHALL")
    r.cmd("SET", "cron:format", str(FORMAT))
    seed("big", runs, 10 * runs)
    r.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0")
    r.cmd("CONFIG", "SET", "slowlog-max-len", "100000")
    worst = {}
    paths = [
        ("list", ["list", "--json"]),
        ("inspect", ["inspect", "big", "--json"]),
        ("history", ["history", "big", "--last", "1000", "--json"]),
        ("trim --dry-run", ["trim", "big", "--keep", "10", "--protect", "1h", "--dry-run", "--json"]),
        ("trim", ["trim", "big", "--keep", "10", "--protect", "1h", "--yes", "--json"]),
        ("run --catch-up", ["run", "--job", "cu", "--schedule", "* * * * *", "--catch-up", "1h",
                            "--max-late", "1m", "--", "true"]),
    ]
    for name, args in paths:
        r.cmd("SLOWLOG", "RESET")
        out = anarchon(*args)
        if out.returncode not in (0, 81):
            raise RuntimeError(f"{name}: {out.returncode} {out.stderr}")
        entries = r.cmd("SLOWLOG", "GET", 100000)
        scripts = sorted(e[2] for e in entries if e[3][0].upper() in ("EVALSHA", "EVAL", "FCALL"))
        worst[name] = (scripts[-1] if scripts else 0, len(scripts),
                       scripts[int(len(scripts) * 0.99)] if scripts else 0,
                       sum(1 for d in scripts if d > 1000))
    # The same number of empty scripts, for what this machine alone does to a maximum: a 2-core
    # VM stalls now and then, and a stall lands on whatever runs.
    r.cmd("SLOWLOG", "RESET")
    for _ in range(max(1, worst["trim"][1] // 200)):
        r.pipeline([["EVALSHA", EMPTY, 0]] * 200)
    entries = r.cmd("SLOWLOG", "GET", 100000)
    empty = sorted(e[2] for e in entries if e[3][0].upper() == "EVALSHA")
    worst["(baseline: empty script)"] = (empty[-1], len(empty), empty[int(len(empty) * 0.99)],
                                         sum(1 for d in empty if d > 1000))
    r.cmd("CONFIG", "SET", "slowlog-log-slower-than", "1000")
    return worst


def main_herd():
    # Three rounds of each burst (ROUNDS=N for more), each against its own SET NX PX burst just
    # before it: a PING's latency on a shared VM is mostly the VM, so one round says little; the
    # median ratio is shown. The server's own time for each burst (INFO commandstats) is the figure
    # the VM disturbs least.
    for batch in (1, 10):
        ratios = []
        for k in range(int(os.environ.get("ROUNDS", "3"))):
            r.cmd("FLUSHALL")
            r.cmd("SET", "cron:format", str(FORMAT))
            # The fleet's jobs exist already (each has run once, every host has registered it): a
            # job's very first claim, which creates it, happens once in its life, not at every slot.
            batch_cmds = []
            for j in range(1000):
                batch_cmds += [claim_cmd(f"herd{j}", 60_000, f"seed{j}", 1000),
                               finish_cmd(f"herd{j}", 60_000, f"seed{j}")]
                if REGISTER:
                    batch_cmds += [register_cmd(f"herd{j}", f"host-{c}") for c in range(5)]
            check(r.pipeline(batch_cmds))
            lock_p99, _, lock_n, lock_busy, _ = herd(batch, use_lock=True)
            p99, worst, n, busy, scripts = herd(batch, use_lock=False)
            ratios.append((p99 / lock_p99, lock_p99, p99, worst, busy / lock_busy, lock_busy, busy, scripts))
        ratios.sort()
        ratio, lock_p99, p99, worst, busy_ratio, lock_busy, busy, scripts = ratios[len(ratios) // 2]
        how = "look first" if LOOK else "scripts only"
        print(f"herd of 1000 jobs x 5 claimants ({how}), {batch} per pipeline: PING p99 {p99:.0f} us "
              f"(max {worst:.0f} us) against {lock_p99:.0f} us for the same burst of SET NX PX: "
              f"{ratio:.1f}x (rounds: {', '.join('%.1fx' % x[0] for x in ratios)}); server CPU for "
              f"the burst {busy / 1000:.1f} ms against {lock_busy / 1000:.1f} ms: {busy_ratio:.1f}x; "
              f"{scripts} scripts for 5000 claims")


def main():
    if os.environ.get("ONLY") == "herd":  # a quick look at the herd alone
        main_herd()
        return
    if os.environ.get("ONLY") == "paths":  # a quick look at the operator paths alone
        for name, (worst, count, p99, over) in longest_scripts_of_operator_paths(100000).items():
            print(f"longest script of {name}: {worst} us over {count} script calls "
                  f"(p99 {p99} us, {over} over 1 ms)")
        return
    print(f"server: {r.cmd('INFO', 'server').split('redis_version:')[1].split()[0]}, store format {FORMAT}, scripts from {SCRIPTS}/, claim and finish by {VERB}")
    floor_us, setdel_us = floor()
    print(f"baseline: two EVALSHA of an empty script {floor_us:.2f} us; SET NX PX + DEL {setdel_us:.2f} us")
    only_steady = os.environ.get("ONLY") == "steady"  # a quick look at claim + finish alone
    for history in ([1000] if QUICK or only_steady else [1000, 10000]):
        # Three rounds (ROUNDS=N for more), each with its floor measured right after it: the median ratio is reported,
        # with the spread, since a shared 2-core VM's speed drifts between seconds.
        rounds = []
        for k in range(int(os.environ.get("ROUNDS", "3"))):
            s = steady_state(history, 500 if QUICK else 2000)
            s["ratio"] = s["pair_us"] / s["floor_us"]
            rounds.append(s)
            r.cmd("DEL", *keys(f"steady{history}"))
        s = sorted(rounds, key=lambda x: x["ratio"])[len(rounds) // 2]
        spread = ", ".join("%.1fx" % x["ratio"] for x in rounds)
        print(f"steady state at {history} runs/job: claim {s['claim_us']:.1f} us, finish {s['finish_us']:.1f} us, "
              f"claim+finish {s['pair_us']:.1f} us = {s['ratio']:.1f}x the empty-EVALSHA floor "
              f"({s['floor_us']:.2f} us; the rounds: "
              f"{spread}), "
              f"{s['pair_us'] / setdel_us:.1f}x SET NX PX + DEL; longest script "
              f"{max(x['max_us'] for x in rounds)} us, longest empty script "
              f"{max(x['max_empty_us'] for x in rounds)} us (kept {s['runs_kept']} runs)")
    if only_steady:
        return
    main_herd()
    r.cmd("FLUSHALL")
    r.cmd("SET", "cron:format", str(FORMAT))
    per_key = memory_per_run(1000)
    total = sum(per_key.values())
    print("memory per run of history at 1000 runs/job: " + ", ".join(
        f"{k} {v:.0f} B" for k, v in per_key.items()) + f"; total {total:.0f} B")
    one, lock = memory_per_job(10000 if QUICK else 100000)
    print(f"memory per job with one run: {one:.0f} B, against {lock:.0f} B for a SET-based lock "
          f"({one / lock:.1f}x)")
    for name, (worst, count, p99, over) in longest_scripts_of_operator_paths(20000 if QUICK else 100000).items():
        print(f"longest script of {name}: {worst} us over {count} script calls "
              f"(p99 {p99} us, {over} over 1 ms)")


main()
