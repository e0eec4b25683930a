"""The docker backend on its own: the seed, stdin, hardening, isolation between runs, clean-up."""

import os
import secrets
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest

from core.errors import GraderError
from core.runs import Limits, RunOutcome, RunRequest, RunStatus
from core.verdicts import grade_source
from service.settings import Settings
from testkit import slowness
from tests.workers.sandbox.leftovers import docker_leftovers
from workers.sandbox import cgroups
from workers.sandbox.docker import (
    DEADLINE_LABEL,
    FIRST_UID,
    INSTANCE_LABEL,
    NAME_PREFIX,
    UIDS,
    DockerSandbox,
)
from workers.sandbox.runtime import DRAWING_ENV

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_daemon")]


@pytest.fixture(scope="module")
def docker() -> DockerSandbox:
    """The docker backend on the runner image; fails if the daemon or the image is missing."""
    sandbox = DockerSandbox(Settings.from_env().runner_image)
    sandbox.check()
    return sandbox


def run(sandbox, source, stdin=b"", **limits):
    """Run a dedented source as main.py with the given limits."""
    files = {"main.py": textwrap.dedent(source).encode()}
    limits = slowness.stretch(Limits(**limits))
    return sandbox.run(RunRequest(files, "main.py", limits, stdin=stdin))


def test_seed_solution_passes(docker, catalog):
    seed = catalog.lesson("expert/what-is-attention").exercise
    verdict = grade_source(seed, seed.solution["model.py"].encode(), docker)
    assert verdict.status is RunStatus.PASSED, verdict.feedback
    assert verdict.stdout == "[0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n"


def test_stdin_and_files_in_subdirectories_arrive(docker):
    request = RunRequest(
        {"main.py": b"import data.x\nprint(input()[::-1], data.x.V)\n", "data/x.py": b"V = 7\n"},
        "main.py",
        stdin=b"abc\n",
    )
    result = docker.run(request)
    assert (result.outcome, result.stdout, result.exit_code) == (RunOutcome.EXITED, b"cba 7\n", 0)


def test_unread_stdin_does_not_block_the_output(docker):
    result = run(docker, "print('x' * 100_000)\n", stdin=b"y" * 2**21, output_kb=256)
    assert result.outcome is RunOutcome.EXITED and len(result.stdout) == 100_001


def test_a_file_name_outside_the_work_dir_is_refused(docker):
    with pytest.raises(GraderError, match="outside the work dir"):
        docker.run(RunRequest({"../x.py": b"", "main.py": b""}, "main.py"))


def test_the_run_is_unprivileged_and_isolated(docker):
    source = """
        import os
        status = dict(line.split(":\\t") for line in open("/proc/self/status").read().splitlines())
        print(os.getuid(), os.getgid(), status["CapEff"], status["NoNewPrivs"], status["Seccomp"])
        mounts = {m.split()[1]: m.split()[3] for m in open("/proc/self/mounts")}
        bounded = ["nr_inodes" in mounts[m] for m in ("/work", "/tmp", "/dev/shm")]
        print(mounts["/"].split(",")[0], *bounded)
        print(sorted(os.environ))
    """
    result = run(docker, source)
    ids, root, env = result.stdout.decode().splitlines()
    uid, gid, caps, no_new_privs, seccomp = ids.split()
    assert int(uid) == int(gid) >= FIRST_UID
    assert (caps, no_new_privs, seccomp) == ("0000000000000000", "1", "2")
    assert root == "ro True True True"
    assert env == str(
        sorted(
            [
                "HOME",
                "HOSTNAME",
                "LANG",
                "OMP_NUM_THREADS",
                "OPENBLAS_NUM_THREADS",
                "PATH",
                "TMPDIR",
                *DRAWING_ENV,
            ]
        )  # fmt: skip
    )


def test_a_fork_bomb_does_not_stop_a_concurrent_run(docker):
    # RLIMIT_NPROC counts a uid's processes across the host: with one shared uid, a bomb at
    # its limit kept every other container from starting ("tini: fork failed")
    source = (
        "import os, time\nwhile True:\n    try: os.fork()\n    except OSError: time.sleep(0.01)\n"
    )
    bomb = threading.Thread(target=run, args=(docker, source), kwargs={"time_s": 4})
    bomb.start()
    time.sleep(1.5)
    result = run(docker, "import subprocess\nprint(subprocess.run(['true']).returncode)\n")
    bomb.join()
    assert result.stdout == b"0\n", result.stderr


def test_concurrent_runs_are_independent(docker):
    results = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(run(docker, f"print({i})\n")))
        for i in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.stdout for r in results) == [b"0\n", b"1\n", b"2\n", b"3\n"]


def test_sweep_removes_run_containers_past_their_deadline(docker):
    name = f"{NAME_PREFIX}stale-{time.monotonic_ns()}"
    subprocess.run(
        ["docker", "create", "--name", name, "--label", f"{DEADLINE_LABEL}=1",
         "--network", "none", docker.image],
        check=True, capture_output=True,
    )  # fmt: skip
    assert docker.sweep() >= 1
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True
    )
    assert listed.stdout == b""


def test_sweep_leaves_a_live_runs_accounting_cgroup_and_removes_an_expired_one(docker):
    # a run's accounting cgroup is empty until its container starts in it, which can take
    # seconds: another codeblanks's sweep meanwhile must leave it (its name holds its deadline)
    token = secrets.token_hex(4)
    live = cgroups.RunCgroup(f"docker-{time.time() + 60:.0f}-{NAME_PREFIX}live{token}", 2**26, 8)
    expired = cgroups.RunCgroup(f"docker-{time.time() - 1:.0f}-{NAME_PREFIX}gone{token}", 2**26, 8)
    live.create()
    expired.create()
    try:
        docker.sweep()
        assert all(d.is_dir() for d in live.dirs.values())
        assert not any(d.exists() for d in expired.dirs.values())
    finally:
        live.remove()
        expired.remove()


def test_runs_carry_their_sandboxs_instance_id(docker):
    other = DockerSandbox(Settings.from_env().runner_image)
    assert other.instance != docker.instance
    seen = []
    done = threading.Event()

    def watch():
        while not done.is_set():
            listed = subprocess.run(
                ["docker", "ps", "--filter", f"label={INSTANCE_LABEL}={other.instance}",
                 "--format", "{{.Names}}"],
                capture_output=True, text=True,
            )  # fmt: skip
            seen.extend(listed.stdout.split())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        assert run(other, "import time; time.sleep(1.5); print(1)").stdout == b"1\n"
    finally:
        done.set()
        watcher.join()
    assert seen and all(name.startswith(f"{NAME_PREFIX}{other.instance}-") for name in seen)
    assert docker_leftovers(other) == [] and docker_leftovers(docker) == []


def test_a_missing_image_is_a_grader_error_that_says_how_to_build_it():
    with pytest.raises(GraderError, match="build-image.sh"):
        DockerSandbox(image="codeblanks-runner:does-not-exist").check()


def test_a_run_reports_its_cpu_time_and_peak_memory_and_leaves_no_cgroup(docker):
    source = """
        import numpy, time
        block = numpy.ones(25 * 2**20 // 8)  # 25 MiB, touched
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
    """
    result = run(docker, source, memory_mb=256)
    assert result.outcome is RunOutcome.EXITED and result.exit_code == 0, result.stderr
    assert result.peak_memory_kb >= 25 * 1024
    assert 300 <= result.cpu_ms < slowness.scaled(5) * 1000  # python and numpy start in it too
    assert docker_leftovers(docker) == []  # its accounting cgroup went with it


def _processes_of(uid: int) -> dict[int, bytes]:
    """Return the host pids and command lines of the live processes whose real uid is `uid`."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # not a process, or gone
        if f"\nUid:\t{uid}\t" in status and "State:\tZ" not in status:
            found[int(entry.name)] = cmdline
    return found


def _reading_stdin(pid: int) -> bool:
    """Return whether the process is blocked in read(0, ...) (x86_64 syscall 0)."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().split()[:2] == ["0", "0x0"]
    except OSError:
        return False


def test_the_entry_process_is_not_dumpable_before_its_exec(docker):
    # a non-dumpable process's /proc/PID/mem belongs to root, whatever its uid: the run's other
    # processes (tini here) can then neither trace it nor read its memory
    name, uid = NAME_PREFIX + secrets.token_hex(8), FIRST_UID + secrets.randbelow(UIDS)
    proc = docker._start(RunRequest({"main.py": b""}, "main.py"), name, uid)
    try:
        ends, found = time.monotonic() + 30, {}
        while time.monotonic() < ends and not any(map(_reading_stdin, found)):
            time.sleep(0.05)  # the entry starts, then waits for a header that never comes
            found = _processes_of(uid)
        owners = {
            cmd.split(b"\0")[0]: os.stat(f"/proc/{pid}/mem").st_uid for pid, cmd in found.items()
        }
        assert owners == {b"/sbin/docker-init": uid, b"/usr/bin/python3": 0}, found
    finally:
        docker._stop(name, proc)
        proc.communicate()
        docker._cli("rm", "-f", name, check=False)
