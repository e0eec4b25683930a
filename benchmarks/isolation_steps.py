"""What each wall of a fresh case costs, on top of a fork of the warm interpreter (issue 27).

Usage: .venv/bin/python benchmarks/isolation_steps.py [--runs N] [--json]   (as root)
A case that sees nothing of the case before it needs, per case, a fork of the numpy
interpreter and its own user, pid, mount, ipc and network namespaces, no capabilities and the
seccomp filter. This forks the sandbox's own interpreter (the runtime tree's python3, with
numpy and the warm pool's preloads imported and gc frozen, as the zygote has them) inside
bwrap, and times a fork whose child runs a small numpy sum and exits, alone and then with each
wall set up in the child, then with all of them. Beside it, one warm run of the seed's
solution (benchmarks/sandbox.py's "warm"). It prints the medians, and what five cases built
so would cost in warm runs, one after another and two at a time (this host's cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.runs import Limits, RunRequest  # noqa: E402
from service.settings import Settings  # noqa: E402
from workers.sandbox.runtime import Runtime  # noqa: E402
from workers.sandbox.warm import WarmSandbox  # noqa: E402
from workers.sandbox.zygote.__main__ import PRELOAD  # noqa: E402

# runs inside bwrap, in the runtime tree's python3, with the zygote's own modules at /zygote
INSIDE = r"""
import gc, importlib, json, os, statistics, sys, time
sys.path.insert(0, "/")
from zygote import linux, seccomp
for name in sys.argv[2].split():
    importlib.import_module(name)
FILTER = seccomp.assemble()
os.makedirs("/tmp/scratch"); os.makedirs("/tmp/work")
gc.collect(); gc.freeze()
CODE = compile("import numpy as np\na = np.ones((4, 8))\nx = (a @ a.T).sum()\n", "case", "exec")

def user(): linux.unshare(linux.CLONE_NEWUSER); linux.map_user(65534)
def net(): linux.unshare(linux.CLONE_NEWNET); linux.loopback_up()
def ipc(): linux.unshare(linux.CLONE_NEWIPC)
def mount():
    linux.unshare(linux.CLONE_NEWNS)
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    linux.mount("tmpfs", "/tmp/scratch", "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=32m")
    os.mkdir("/tmp/scratch/work")
    linux.mount("/tmp/scratch/work", "/tmp/work", None, linux.MS_BIND)
def pid():  # a pid 1 of its own: the case runs in a second fork, as a run's program does
    linux.unshare(linux.CLONE_NEWPID)
    child = os.fork()
    if child:
        os._exit(os.waitpid(child, 0)[1] >> 8)
def caps(): linux.drop_capabilities(bounding=True)
def filtered(): linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1); seccomp.install(FILTER)
def every(): pid(); mount(); ipc(); net(); user(); caps(); filtered()

STEPS = {"fork": None, "user": user, "pid": pid, "mount": mount, "ipc": ipc, "net": net,
         "caps": caps, "filter": filtered, "all": every}
runs = int(sys.argv[1])
times = {name: [] for name in STEPS}
for _ in range(runs):
    for name, step in STEPS.items():  # interleaved: drift in the host's speed hits all alike
        started = time.perf_counter()
        child = os.fork()
        if child == 0:
            try:
                if step is not None:
                    step()
                exec(CODE, {})
                os._exit(0)
            finally:
                os._exit(3)
        status = os.waitpid(child, 0)[1]
        assert status == 0, (name, status)
        times[name].append((time.perf_counter() - started) * 1000)
print(json.dumps({name: statistics.median(t) for name, t in times.items()}))
"""


def inside(runtime: Runtime, runs: int) -> dict[str, float]:
    """Return the median ms of a fork with each wall, measured inside bwrap (caps kept)."""
    root = runtime.root
    zygote = REPO / "workers" / "sandbox" / "zygote"
    args = ["bwrap", "--ro-bind", str(root / "usr"), "/usr"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if (root / link).is_symlink():
            args += ["--symlink", os.readlink(root / link), f"/{link}"]
    args += [
        "--ro-bind", str(root / "etc"), "/etc", "--ro-bind", str(zygote), "/zygote",
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--unshare-pid", "--unshare-ipc", "--unshare-net", "--cap-add", "ALL",
        "/usr/bin/python3", "-c", INSIDE, str(runs), " ".join(PRELOAD),
    ]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the measurement failed in bwrap: {done.stderr[-2000:]}")
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def warm_run(runtime: Runtime, runs: int) -> float:
    """Return the median ms of one warm run of the seed's solution, as benchmarks/sandbox.py."""
    seed = REPO / "lessons" / "expert" / "what-is-attention" / "solution" / "model.py"
    request = RunRequest({"model.py": seed.read_bytes()}, "model.py", Limits())
    pool = WarmSandbox(runtime)
    pool.start()
    try:
        times = []
        for _ in range(runs + 3):
            time.sleep(0.15)  # a settled pool, as a submission meets it
            started = time.perf_counter()
            pool.run(request)
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times[3:])
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    runtime = Runtime(Settings.from_env().runtime_dir)
    runtime.check()
    steps = inside(runtime, options.runs)
    warm = warm_run(runtime, options.runs)
    cores = os.cpu_count() or 1
    case = steps["all"]
    result = {
        "runs": options.runs,
        "cores": cores,
        "load": os.getloadavg()[0],
        "warm_run_ms": round(warm, 2),
        "fork_ms": {name: round(ms, 2) for name, ms in steps.items()},
        "wall_ms": {name: round(ms - steps["fork"], 2) for name, ms in steps.items()},
        "five_cases_in_runs": {
            "one_after_another": round((warm + 4 * case) / warm, 2),
            "at_once": round((warm + 4 * case / cores) / warm, 2),
        },
    }
    load = result["load"]
    print(f"one warm run of the seed's solution: {warm:.2f} ms ({cores} cores, load {load:.1f})")
    print("a fork of the warm interpreter running a small numpy sum, with one wall each:")
    for name, ms in steps.items():
        extra = "" if name == "fork" else f"  (+{ms - steps['fork']:.2f})"
        print(f"  {name:<7} {ms:6.2f} ms{extra}")
    print(
        f"five cases, the first a warm run and four forks with every wall: "
        f"{result['five_cases_in_runs']['one_after_another']}x one run in turn, "
        f"{result['five_cases_in_runs']['at_once']}x with {cores} at once (at best)"
    )
    if options.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
