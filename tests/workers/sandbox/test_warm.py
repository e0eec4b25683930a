import hashlib
import secrets
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from core.cases import HARNESS
from core.runs import Limits, RunOutcome, RunRequest, RunStatus
from core.verdicts import grade_source
from service.settings import Settings
from testkit import slowness
from tests.conftest import REPO
from tests.workers.sandbox.leftovers import boot_clock, released_leftovers, settled, warm_leftovers
from workers.sandbox.fake import FakeSandbox
from workers.sandbox.runtime import Runtime
from workers.sandbox.slot import MOST_ARMED
from workers.sandbox.warm import WarmSandbox

pytestmark = pytest.mark.bwrap
RUNTIME = Runtime(Settings.from_env().runtime_dir)


@pytest.fixture(scope="module")
def solo():
    """A pool of one slot, so that consecutive runs share a zygote."""
    sandbox = WarmSandbox(RUNTIME, slots=1)
    sandbox.start()
    yield sandbox
    uid = sandbox.slots()[0].uid
    sandbox.close()
    assert released_leftovers([uid], boot_clock()) == []


def run(sandbox, source, stdin=b"", **limits):
    files = {"main.py": textwrap.dedent(source).encode()}
    limits = slowness.stretch(Limits(**limits))
    return sandbox.run(RunRequest(files, "main.py", limits, stdin=stdin))


def _processes_of(uid):
    ps = subprocess.run(["ps", "-eo", "uid=,stat=,args="], capture_output=True, text=True)
    lines = [line.split(None, 2) for line in ps.stdout.splitlines()]
    return [line for line in lines if line[0] == str(uid) and not line[1].startswith("Z")]


def _settled_leftovers():
    return settled(warm_leftovers)  # a slot being re-armed is briefly between states


def _zygote(sandbox):
    run(sandbox, "pass")  # waits until the slot is armed again
    return sandbox.slots()[0].zygote_pid()


def test_seed_solution_passes_and_starter_fails(warm, seed):
    verdict = grade_source(seed, seed.solution["model.py"].encode(), warm)
    assert verdict.status is RunStatus.PASSED, verdict.feedback
    assert verdict.stdout == "[0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n"
    assert grade_source(seed, seed.starter_code.encode(), warm).status is RunStatus.FAILED


def test_hundred_sequential_runs_are_all_right(warm):
    for i in range(100):
        result = run(warm, f"import numpy\nprint({i} + int(numpy.ones(2).sum()))\n")
        assert (result.outcome, result.exit_code, result.stdout) == (
            RunOutcome.EXITED,
            0,
            f"{i + 2}\n".encode(),
        ), (i, result)


def test_runs_look_like_a_fresh_python3(warm):
    source = """
        import atexit, os, sys
        atexit.register(print, "bye")
        print(os.getuid(), os.getgid(), os.getpid(), os.getcwd(), sys.argv, sys.path[0])
        print(__name__, __file__, sorted(os.listdir(".")), "zygote" in sys.modules)
        print(input()[::-1])
        status = {k: v.split() for k, v in (l.split(":", 1) for l in open("/proc/self/status"))}
        print(status["Seccomp"], status["NoNewPrivs"], status["CapEff"], status["CapBnd"])
        import socket  # loopback is up, as in bwrap: a program may talk to itself
        server = socket.create_server(("127.0.0.1", 0))
        print(socket.create_connection(server.getsockname()).getpeername()[0])
        raise SystemExit("leaving")
    """
    result = run(warm, source, stdin=b"abc\n")
    assert result.stdout.decode().splitlines() == [
        "65534 65534 2 /work ['/work/main.py'] /work",
        "__main__ /work/main.py ['main.py'] False",
        "cba",
        "['2'] ['1'] ['0000000000000000'] ['0000000000000000']",
        "127.0.0.1",
        "bye",
    ]
    assert (result.exit_code, result.stderr) == (1, b"leaving\n")
    crash = run(warm, "def f():\n    return 1 / 0\nf()\n")
    assert crash.exit_code == 1
    assert crash.stderr.startswith(b'Traceback (most recent call last):\n  File "/work/main.py"')
    assert crash.stderr.endswith(b"ZeroDivisionError: division by zero\n")


FIRST = """
    import builtins, ctypes, numpy, os, random, socket, subprocess, sys, threading, time
    SECRET = "CBMARK-" + "{token}"
    open("/tmp/left", "w").write(SECRET)
    open("/work/left", "w").write(SECRET)
    open("/dev/shm/left", "w").write(SECRET)
    os.environ["LEFT"] = SECRET
    builtins.LEFT = numpy.LEFT = SECRET
    numpy.sum = lambda *a, **k: "patched"
    sys.modules["left"] = type(sys)("left")
    del sys.modules["json"]
    sys.setrecursionlimit(50)
    libc = ctypes.CDLL(None, use_errno=True)
    print("shm", libc.shmget(0xC0DE, 4096, 0o1666) >= 0)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("\\0codeblanks-left")
    listener.listen()
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    subprocess.Popen(["/usr/bin/python3", "-c", "import time; time.sleep(60)"],
                     start_new_session=True)
    if os.fork() == 0:
        time.sleep(60)
    print(numpy.random.randint(1 << 30), random.getrandbits(30))
"""

SECOND = """
    import builtins, ctypes, gc, hashlib, json, numpy, os, random, re, socket, sys
    print(sorted(os.listdir(".")), os.listdir("/tmp"), os.listdir("/dev/shm"))
    print("LEFT" in os.environ, hasattr(builtins, "LEFT"), hasattr(numpy, "LEFT"))
    print(numpy.sum([1, 2]), "left" in sys.modules, sys.getrecursionlimit())
    libc = ctypes.CDLL(None, use_errno=True)
    print("shm", libc.shmget(0xC0DE, 4096, 0o666))
    try:
        socket.socket(socket.AF_UNIX).connect("\\0codeblanks-left")
        print("connected")
    except OSError:
        print("refused")
    print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
    print(numpy.random.randint(1 << 30), random.getrandbits(30))
    WANTED = {{"{gone}": "gone", "{mine}": "mine"}}
    MINE = "CBMARK-" + "{token2}"
    found = set()
    for obj in gc.get_objects():
        for text in (obj if isinstance(obj, (list, tuple, set)) else [obj]):
            if isinstance(text, str) and "CBMARK-" in text:
                for tail in re.findall(r"CBMARK-([0-9a-f]{{32}})", text):
                    found.add(WANTED.get(hashlib.sha256(tail.encode()).hexdigest(), "other"))
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb") as mem:
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            if line.split()[1].startswith("rw"):
                mem.seek(start)
                try:
                    chunk = mem.read(end - start)
                except OSError:
                    continue
                for tail in re.findall(rb"CBMARK-([0-9a-f]{{32}})", chunk):
                    found.add(WANTED.get(hashlib.sha256(tail).hexdigest(), "other"))
    print(sorted(found))
"""


def _zygote_memory_holds(pid, needle):
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            if line.split()[1].startswith("rw"):
                try:
                    mem.seek(start)
                    if needle in mem.read(end - start):
                        return True
                except OSError:
                    continue
    return False


def test_nothing_of_a_run_reaches_the_next_run_or_the_zygote(solo):
    token, token2 = secrets.token_hex(16), secrets.token_hex(16)
    zygote = _zygote(solo)
    first = run(solo, FIRST.format(token=token))
    assert first.exit_code == 0 and first.stdout.startswith(b"shm True\n"), first
    assert not _zygote_memory_holds(zygote, f"CBMARK-{token}".encode())
    assert _zygote_memory_holds(zygote, b"numpy")  # the scan does read the zygote's heap
    gone = hashlib.sha256(token.encode()).hexdigest()
    mine = hashlib.sha256(token2.encode()).hexdigest()
    second = run(solo, SECOND.format(gone=gone, mine=mine, token2=token2))
    lines = second.stdout.decode().splitlines()
    assert lines[:7] == [
        "['main.py'] [] []",
        "False False False",
        "3 False 1000",
        "shm -1",
        "refused",
        "[1, 2]",
        lines[6],
    ], second
    assert lines[6] != first.stdout.decode().splitlines()[-1]  # fresh random state
    assert lines[7] == "['mine']", second  # found its own marker, and not the last run's
    assert _zygote(solo) == zygote  # both runs were clean: the slot was kept
    assert _settled_leftovers() == []


# the filter's refusals, other ABIs and what it still allows: the hostile suite, on every
# backend (tests/workers/sandbox/hostile/syscalls.py)


def test_the_runs_supervisor_is_closed_to_its_program(warm):
    # pid 1 of a run is our supervisor, of the program's uid on the host: two walls keep the
    # program out of its memory and environment, the program's own user namespace and the
    # supervisor's being non-dumpable (each alone is enough: this test holds both together)
    source = """
        import os
        print(os.getppid())
        for what in ("mem", "environ", "maps"):
            try:
                open(f"/proc/1/{what}", "rb").close()
                print(what, "OPENED")
            except OSError as exc:
                print(what, type(exc).__name__)
    """
    result = run(warm, source)
    assert result.stdout.decode().split("\n") == [
        "1",
        "mem PermissionError",
        "environ PermissionError",
        "maps PermissionError",
        "",
    ], result


def test_filter_itself_refuses_root_on_the_host():
    """Outside any sandbox, as root: only the filter can make these fail."""
    probe = """
        import ctypes, os, sys
        from workers.sandbox.zygote import linux, seccomp
        seccomp.install()
        for call in (lambda: linux.unshare(linux.CLONE_NEWNS),
                     lambda: linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)):
            try:
                call()
                print("allowed")
            except PermissionError:
                print("refused")
        print(os.getpid() > 0)
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(probe)], capture_output=True, text=True, cwd=REPO
    )
    assert done.stdout == "refused\nrefused\nTrue\n", done.stderr


@pytest.mark.parametrize(
    ("name", "source", "outcomes"),
    [
        ("infinite loop", "while True: pass\n", {RunOutcome.TIMEOUT}),
        ("sleep forever", "import time\ntime.sleep(1000)\n", {RunOutcome.TIMEOUT}),
        (
            "fork bomb",
            "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n",
            {RunOutcome.TIMEOUT},
        ),
        ("memory hog", "x = []\nwhile True: x.append(bytearray(32 * 2**20))\n", {"memory"}),
        ("numpy 10 GiB", "import numpy\nnumpy.ones(10 * 2**30)\n", {"memory"}),
        ("output flood", "while True: print('x' * 1000)\n", {RunOutcome.OUTPUT_LIMIT}),
    ],
)
def test_runaway_programs_end_in_time_and_cost_the_slot(solo, name, source, outcomes):
    outcomes = {RunOutcome.MEMORY_LIMIT if o == "memory" else o for o in outcomes}
    zygote = _zygote(solo)
    limits = slowness.stretch(Limits(time_s=2, memory_mb=128, output_kb=16))
    started = time.monotonic()
    result = solo.run(RunRequest({"main.py": textwrap.dedent(source).encode()}, "main.py", limits))
    assert result.outcome in outcomes, (name, result)
    assert time.monotonic() - started < limits.time_s + slowness.scaled(1.5), name
    assert len(result.stdout) <= 16 * 1024
    assert _zygote(solo) != zygote, "the slot was not replaced"


def test_concurrent_runs_from_many_threads(warm):
    results = {}

    def one(i):
        source = "import time\ntime.sleep(0.05)\nprint({}, {})\n"
        results[i] = [run(warm, source.format(i, k)) for k in range(3)]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        assert [r.stdout for r in results[i]] == [f"{i} {k}\n".encode() for k in range(3)]


def test_a_lazy_pool_grows_only_when_runs_overlap():
    with WarmSandbox(RUNTIME, slots=2) as sandbox:
        for _ in range(5):
            assert run(sandbox, "print(1)").stdout == b"1\n"
        assert len(sandbox.slots()) == 1  # one run at a time: one zygote
        sleepy = "import time; time.sleep(0.5)"
        threads = [threading.Thread(target=run, args=(sandbox, sleepy)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(sandbox.slots()) == 2


def test_close_kills_every_zygote_and_frees_the_uids():
    sandbox = WarmSandbox(RUNTIME, slots=2)
    sandbox.start()
    assert run(sandbox, "print(1)").stdout == b"1\n"
    uids = [slot.uid for slot in sandbox.slots()]
    assert len(uids) == 2 and all(_processes_of(uid) for uid in uids)
    sandbox.close()
    assert released_leftovers(uids, boot_clock()) == []


def test_a_pool_that_cannot_start_falls_back(tmp_path):
    python = tmp_path / "usr" / "bin" / "python3"  # a tree that passes check(), then fails
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\nexit 1\n")
    fallback = FakeSandbox()
    with WarmSandbox(Runtime(tmp_path), slots=1, fallback=fallback) as sandbox:
        result = run(sandbox, "print('hi')  # prints: cold\n")
    assert result.stdout == b"cold" and len(fallback.requests) == 1


def test_a_file_named_like_a_prepared_program_runs_its_own_text(warm):
    """The zygote compiles the case harness ahead; a different text under its name is run as
    itself, never as the harness."""
    own = RunRequest({HARNESS: b"print('my own')\n"}, HARNESS)
    assert warm.run(own).stdout == b"my own\n"


def test_an_idle_pool_holds_a_reserve_of_armed_runs_for_a_burst_of_cases():
    with WarmSandbox(RUNTIME, slots=1) as sandbox:
        sandbox.start()
        assert run(sandbox, "print(1)").stdout == b"1\n"
        deadline = time.monotonic() + slowness.scaled(30)
        while sandbox.slots()[0].armed < MOST_ARMED:
            assert time.monotonic() < deadline, "the idle pool never filled its reserve"
            time.sleep(0.05)
        assert warm_leftovers() == []
