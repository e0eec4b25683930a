import dataclasses
import math
import os
import signal
import socket
import textwrap
import threading
import time

import pytest

from core.errors import GraderError
from core.runs import Limits, RunOutcome, RunRequest, RunStatus
from core.verdicts import grade_source
from testkit import slowness
from workers.sandbox import cgroups
from workers.sandbox.bwrap import BwrapSandbox

pytestmark = [pytest.mark.bwrap, pytest.mark.usefixtures("clean_host")]


def grade(bwrap, exercise, source, **limits):
    if limits:
        exercise = dataclasses.replace(exercise, limits=slowness.stretch(Limits(**limits)))
    return grade_source(exercise, textwrap.dedent(source).encode(), bwrap)


def run(bwrap, source, **limits):
    limits = slowness.stretch(Limits(**limits))
    return bwrap.run(RunRequest({"main.py": textwrap.dedent(source).encode()}, "main.py", limits))


def test_seed_solution_passes(bwrap, seed):
    verdict = grade_source(seed, seed.solution["model.py"].encode(), bwrap)
    assert verdict.status is RunStatus.PASSED and verdict.score == 1.0
    assert verdict.stdout == "[0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n"
    assert verdict.exit_code == 0


def test_seed_starter_fails(bwrap, seed):
    verdict = grade_source(seed, seed.starter_code.encode(), bwrap)
    assert verdict.status is RunStatus.FAILED and verdict.score == 0.0
    assert "Line 1 is missing" in verdict.feedback


def test_wrong_second_line_is_named(bwrap, seed):
    source = seed.solution["model.py"].replace("a @ degerler", "a @ degerler * 2")
    verdict = grade_source(seed, source.encode(), bwrap)
    assert verdict.status is RunStatus.FAILED
    assert verdict.diff is not None and verdict.diff.line == 2
    assert "Line 2 differs: expected `[0.893 0.213]`" in verdict.feedback


def test_crlf_and_trailing_spaces_still_pass(bwrap, seed):
    source = """
        import sys
        sys.stdout.write("[0.787 0.107 0.107]   \\r\\n[0.893 0.213]\\t\\r\\nTrue \\r\\n\\r\\n")
    """
    verdict = grade(bwrap, seed, source)
    assert verdict.status is RunStatus.PASSED


def test_expected_output_printed_then_nonzero_exit_is_an_error(bwrap, seed):
    source = """
        import atexit, os
        atexit.register(lambda: print("[0.787 0.107 0.107]\\n[0.893 0.213]\\nTrue"))
        raise SystemExit(3)
    """
    verdict = grade(bwrap, seed, source)
    assert verdict.status is RunStatus.ERROR and verdict.exit_code == 3


def test_exception_reports_last_line(bwrap, seed):
    verdict = grade(bwrap, seed, "print(undefined_name)\n")
    assert verdict.status is RunStatus.ERROR
    assert "NameError: name 'undefined_name' is not defined" in verdict.feedback


@pytest.mark.parametrize(
    ("name", "source", "statuses"),
    [
        ("infinite loop", "while True: pass\n", {RunStatus.TIMEOUT}),
        ("sleep forever", "import time\ntime.sleep(1000)\n", {RunStatus.TIMEOUT}),
        (
            "fork bomb",
            "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n",
            {RunStatus.TIMEOUT, RunStatus.ERROR},
        ),
        (
            "memory hog",
            "x = []\nwhile True: x.append(bytearray(32 * 2**20))\n",
            {RunStatus.MEMORY_LIMIT},
        ),
        ("numpy 10 GiB", "import numpy as np\nnp.ones(10 * 2**30)\n", {RunStatus.MEMORY_LIMIT}),
    ],
)
def test_runaway_programs_end_within_limit_plus_one_second(bwrap, seed, name, source, statuses):
    limits = slowness.stretch(Limits(time_s=2, memory_mb=128))  # 2 s on the reference host
    started = time.monotonic()
    verdict = grade_source(dataclasses.replace(seed, limits=limits), source.encode(), bwrap)
    elapsed = time.monotonic() - started
    assert verdict.status in statuses, (name, verdict)
    assert elapsed < limits.time_s + slowness.scaled(1), (name, elapsed)
    assert verdict.score == 0.0


def test_output_flood_is_cut(bwrap):
    result = run(bwrap, "while True: print('x' * 1000)\n", output_kb=16)
    assert result.outcome is RunOutcome.OUTPUT_LIMIT
    assert len(result.stdout) <= 16 * 1024


def test_binary_output_is_kept_as_bytes(bwrap, seed):
    verdict = grade(bwrap, seed, "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x00ok')\n")
    assert verdict.status is RunStatus.FAILED
    assert verdict.stdout.endswith("ok")


def test_no_network_not_even_loopback(bwrap):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted = []
    listener.settimeout(0.1)

    def accept():
        try:
            accepted.append(listener.accept())
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    source = f"""
        import socket
        for addr in [("127.0.0.1", {port}), ("1.1.1.1", 53)]:
            try:
                socket.create_connection(addr, timeout=1)
                print("connected", addr)
            except OSError as exc:
                print("refused", type(exc).__name__)
        try:
            socket.getaddrinfo("deb.debian.org", 80)
            print("resolved")
        except OSError:
            print("no dns")
    """
    result = run(bwrap, source)
    thread.join()
    listener.close()
    assert accepted == []
    assert b"connected" not in result.stdout and b"resolved" not in result.stdout
    assert result.stdout.count(b"refused") == 2 and b"no dns" in result.stdout


def test_host_files_and_environment_are_out_of_reach(bwrap, tmp_path, monkeypatch):
    secret = tmp_path / "secret.key"
    secret.write_text("TOP-SECRET")
    secret.chmod(0o644)
    monkeypatch.setenv("CODEBLANKS_SESSION_KEY", "TOP-SECRET")
    source = f"""
        import os
        print(os.getuid(), os.getgid())
        print(sorted(os.environ))
        for path in ["{secret}", "/etc/shadow", "/etc/passwd", "/root", "/proc/1/environ",
                     "/var/lib/codeblanks", "{tmp_path}"]:
            try:
                print(path, open(path).read()[:20] if os.path.isfile(path) else os.listdir(path))
            except OSError as exc:
                print(path, "denied", type(exc).__name__)
        print(sorted(p for p in os.listdir("/proc") if p.isdigit()))
        for target in ["/usr/lib/python3/dist-packages/numpy/__init__.py", "/evil", "/etc/x"]:
            try:
                open(target, "a").write("poison")
                print("WROTE", target)
            except OSError as exc:
                print("read-only", target)
    """
    result = run(bwrap, source)
    out = result.stdout.decode()
    assert "TOP-SECRET" not in out and "WROTE" not in out
    assert out.splitlines()[0] == "65534 65534"
    assert "CODEBLANKS_SESSION_KEY" not in out
    assert out.count("read-only") == 3
    pids = eval(out.splitlines()[-4])  # noqa: S307 - our own run's printed list
    assert len(pids) <= 3  # bwrap's init, python, nothing of the host


def test_user_namespaces_cannot_be_created(bwrap):
    source = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
    """
    result = run(bwrap, source)
    assert result.stdout.startswith(b"unshare -1")


def test_background_process_does_not_outlive_its_run(bwrap):
    source = """
        import subprocess
        subprocess.Popen(["/usr/bin/python3", "-c", "import time; time.sleep(60)"],
                         start_new_session=True)
        print("spawned")
    """
    result = run(bwrap, source)
    assert result.stdout == b"spawned\n"  # clean_host asserts no process is left


def test_files_written_do_not_reach_the_next_run(bwrap):
    first = run(bwrap, "open('/tmp/left', 'w').write('x'); open('left', 'w').write('x')\n")
    assert first.exit_code == 0
    second = run(bwrap, "import os\nprint(os.path.exists('/tmp/left'), sorted(os.listdir('.')))\n")
    assert second.stdout == b"False ['main.py']\n"


def test_disk_and_inode_floods_are_bounded(bwrap):
    source = """
        import os
        n = 0
        try:
            while True:
                open(f"/tmp/f{n}", "w").close()
                n += 1
        except OSError as exc:
            print("inodes stopped", type(exc).__name__)
        try:
            with open("/work/big", "wb") as f:
                while True:
                    f.write(b"x" * 2**20)
        except OSError as exc:
            print("disk stopped", type(exc).__name__)
    """
    result = run(bwrap, source, time_s=10)
    assert b"inodes stopped" in result.stdout and b"disk stopped" in result.stdout


def test_concurrent_runs_are_independent(bwrap):
    results = []

    def one(i):
        results.append(run(bwrap, f"import time\ntime.sleep(0.3)\nprint({i})\n"))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.stdout for r in results) == [b"0\n", b"1\n", b"2\n", b"3\n"]


def test_stdin_is_delivered(bwrap):
    request = RunRequest({"main.py": b"print(input()[::-1])\n"}, "main.py", stdin=b"abc\n")
    assert bwrap.run(request).stdout == b"cba\n"


def test_rlimits_reach_the_program(bwrap):
    request = RunRequest(
        {"main.py": b"print(open('/proc/self/limits').read())"},
        "main.py",
        slowness.stretch(Limits(time_s=3, processes=40)),
    )
    cpu = math.ceil(request.limits.time_s)
    result = bwrap.run(request)
    limits = {
        line[:26].strip(): line[26:].split()[:2] for line in result.stdout.decode().splitlines()
    }
    assert limits["Max cpu time"] == [str(cpu), str(cpu + 1)]
    assert limits["Max open files"] == ["64", "64"]
    assert limits["Max processes"] == ["40", "40"]
    assert limits["Max core file size"] == ["0", "0"]
    assert limits["Max address space"] == [str(2048 * 2**20)] * 2


def _joined(name):
    """Return the one process of an armed launcher's cgroup, once it has joined (within 2 s)."""
    for _ in range(int(slowness.scaled(200))):
        procs = _procs(name)
        if procs:
            (pid,) = procs
            return int(pid)
        time.sleep(0.01)
    raise AssertionError(f"no launcher joined {name}")


def _procs(name):
    """Return the processes of a run cgroup, None once it is gone (read through cgroups.py)."""
    return cgroups.members(name)


@pytest.fixture
def fresh(bwrap):
    """A bwrap sandbox of the test's own, so that no other test's launchers are armed."""
    sandbox = BwrapSandbox(bwrap.runtime)
    yield sandbox
    sandbox.close()


def test_a_launcher_is_armed_after_the_second_run_and_holds_nothing(fresh, seed):
    bwrap = fresh
    solution = seed.solution["model.py"].encode()
    grade_source(seed, solution, bwrap)
    assert bwrap.armed() == []  # a one-shot caller never pays for a spare
    grade_source(seed, solution, bwrap)
    (spare,) = bwrap.armed()
    pid = _joined(spare)
    with open(f"/proc/{pid}/status") as status:
        uids = next(line for line in status if line.startswith("Uid:")).split()[1:]
    assert uids == ["0"] * 4  # still the host's sh, waiting; it drops to the run uid later
    assert not (bwrap.runs_dir / spare).exists()  # no tmpfs, no files before its run
    verdict = grade_source(seed, solution, bwrap)
    assert verdict.status is RunStatus.PASSED
    assert bwrap.armed() != [spare] and _procs(spare) is None  # used once, then gone
    bwrap.close()
    assert bwrap.armed() == []


def test_a_launcher_killed_while_waiting_is_replaced(fresh, seed):
    bwrap = fresh
    solution = seed.solution["model.py"].encode()
    for _ in range(2):
        grade_source(seed, solution, bwrap)
    (spare,) = bwrap.armed()
    os.kill(_joined(spare), signal.SIGKILL)
    verdict = grade_source(seed, solution, bwrap)
    assert verdict.status is RunStatus.PASSED
    assert _procs(spare) is None


def test_a_launcher_that_cannot_join_its_cgroup_is_a_clear_error(fresh, monkeypatch):
    monkeypatch.setattr(
        cgroups.RunCgroup, "procs_files", property(lambda self: ["/nonexistent/cgroup.procs"])
    )
    with pytest.raises(GraderError, match="did not start: .*nonexistent/cgroup.procs"):
        run(fresh, "print('never')")
    assert fresh.armed() == []
