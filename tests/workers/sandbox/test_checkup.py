"""The host check (issue 26.5): each part found ok, warn or fail, with how to fix it.

A kernel this machine is not (Ubuntu 24.04's AppArmor restriction, cgroup v2 with and
without delegation, an old bubblewrap) is faked by handing the checks a Host whose /proc/sys,
cgroup tree and programs are files in the test's directory; the checks themselves are the
product's. The real host is checked too: ok or warn here, whichever cgroup version it runs.
"""

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from core.runs import RunOutcome, RunRequest, RunResult
from service.settings import Settings
from tests.service.cli import codeblanks, codeblanks_in
from workers.sandbox import checkup, hierarchy
from workers.sandbox.checkup import Host, Level
from workers.sandbox.fake import FakeSandbox
from workers.sandbox.runtime import Runtime


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sysctls(tmp_path: Path, **values: str) -> Host:
    """A Host whose /proc/sys holds these values (keys: kernel__name for kernel/name)."""
    root = tmp_path / "sys"
    root.mkdir(exist_ok=True)
    for key, value in values.items():
        write(root / key.replace("__", "/"), value + "\n")
    return Host(proc_sys=root)


@pytest.mark.parametrize(
    ("values", "level", "fix"),
    [
        ({}, Level.OK, ""),  # Debian 12: none of the restricting sysctls exists
        ({"user__max_user_namespaces": "63000"}, Level.OK, ""),
        ({"kernel__apparmor_restrict_unprivileged_userns": "0"}, Level.OK, ""),
        (
            {"kernel__apparmor_restrict_unprivileged_userns": "1"},
            Level.FAIL,
            "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
        ),
        (
            {"kernel__unprivileged_userns_clone": "0"},
            Level.FAIL,
            "sysctl -w kernel.unprivileged_userns_clone=1",
        ),
        ({"user__max_user_namespaces": "0"}, Level.FAIL, "user.max_user_namespaces=15000"),
    ],
)
def test_user_namespaces_read_from_a_faked_sysctl(tmp_path, values, level, fix):
    finding = checkup.user_namespaces(sysctls(tmp_path, **values))
    assert finding.level is level, finding
    assert fix in finding.fix
    if level is Level.FAIL:
        assert "/etc/sysctl.d/" in finding.fix  # and how to keep it after a reboot


def test_ubuntu_2404s_apparmor_restriction_is_named_in_plain_words(tmp_path):
    host = sysctls(tmp_path, kernel__apparmor_restrict_unprivileged_userns="1")
    finding = checkup.user_namespaces(host)
    assert "AppArmor" in finding.found and "Ubuntu" in finding.found


def v2_tree(tmp_path: Path, controllers: str = "cpuset cpu io memory hugetlb pids") -> Path:
    """A fake cgroup v2 tree: a root with its controllers, and a systemd-like slice below."""
    root = tmp_path / "cgroup"
    write(root / "cgroup.controllers", controllers + "\n")
    for unit in ("user.slice/session-3.scope", "system.slice/codeblanks-worker.service"):
        write(root / unit / "cgroup.controllers", controllers + "\n")
    return root


def test_cgroup_v2_without_delegation_warns_and_says_how_to_delegate(tmp_path):
    root = v2_tree(tmp_path)
    host = Host(cgroup_root=root, self_cgroup="0::/user.slice/session-3.scope\n", euid=0)
    finding = checkup.cgroups(host)
    assert finding.level is Level.WARN, finding
    assert "cgroup v2 without delegation" in finding.found
    assert str(root / "codeblanks") in finding.found
    assert "Delegate=yes" in finding.fix


def test_cgroup_v2_delegated_by_systemd_is_where_runs_go(tmp_path):
    root = v2_tree(tmp_path)
    unit = root / "system.slice/codeblanks-worker.service"
    os.setxattr(unit, "trusted.delegate", b"1")  # what systemd 251+ sets for Delegate=yes
    self_cgroup = "0::/system.slice/codeblanks-worker.service\n"
    finding = checkup.cgroups(Host(cgroup_root=root, self_cgroup=self_cgroup, euid=0))
    assert finding.level is Level.OK, finding
    assert f"runs go under {unit / 'codeblanks'}" in finding.found
    home = hierarchy.find(root, self_cgroup)
    assert (home.delegated, home.settled, home.relative) == (
        True,
        False,  # the worker has yet to move into its leaf
        "/system.slice/codeblanks-worker.service/codeblanks",
    )


def test_a_settled_delegated_subtree_is_found_from_the_workers_leaf(tmp_path):
    root = v2_tree(tmp_path)
    unit = root / "system.slice/codeblanks-worker.service"
    (unit / hierarchy.LEAF).mkdir()
    (unit / hierarchy.PREFIX).mkdir()
    self_cgroup = f"0::/system.slice/codeblanks-worker.service/{hierarchy.LEAF}\n"
    home = hierarchy.find(root, self_cgroup)
    assert (home.delegated, home.settled) == (True, True)
    assert home.parents == {"all": unit / "codeblanks"}


def test_a_subtree_settled_just_now_is_still_delegated(tmp_path):
    # the worker has moved itself into its leaf and not yet made the runs' parent: it must not
    # take the leaf for an undelegated cgroup and put its runs at the top of the tree
    root = v2_tree(tmp_path)
    unit = root / "system.slice/codeblanks-worker.service"
    os.setxattr(unit, "trusted.delegate", b"1")
    (unit / hierarchy.LEAF).mkdir()
    self_cgroup = f"0::/system.slice/codeblanks-worker.service/{hierarchy.LEAF}\n"
    home = hierarchy.find(root, self_cgroup)
    assert (home.delegated, home.settled) == (True, True)
    assert home.parents == {"all": unit / "codeblanks"}


@pytest.mark.parametrize(
    ("controllers", "level", "said"),
    [
        ("cpu io memory pids", Level.WARN, "without delegation"),
        ("io memory pids", Level.WARN, "without the cpu controller"),
        ("cpu io pids", Level.FAIL, "no memory controller"),
    ],
)
def test_cgroup_v2_controllers(tmp_path, controllers, level, said):
    root = v2_tree(tmp_path, controllers)
    host = Host(cgroup_root=root, self_cgroup="0::/user.slice/session-3.scope\n", euid=0)
    finding = checkup.cgroups(host)
    assert finding.level is level and said in finding.found, finding


def test_cgroup_v1_is_found_by_its_hierarchies(tmp_path):
    root = tmp_path / "cgroup"
    for controller in ("memory", "pids", "cpu,cpuacct"):
        (root / controller).mkdir(parents=True)
    for link in ("cpu", "cpuacct"):
        (root / link).symlink_to("cpu,cpuacct")
    finding = checkup.cgroups(Host(cgroup_root=root, euid=0))
    assert finding.level is Level.OK and finding.found.startswith("cgroup v1"), finding
    (root / "pids").rmdir()
    finding = checkup.cgroups(Host(cgroup_root=root, euid=0))
    assert finding.level is Level.FAIL and "pids controller is not mounted" in finding.found


def test_cgroups_need_root(tmp_path):
    finding = checkup.cgroups(Host(cgroup_root=v2_tree(tmp_path), self_cgroup="0::/\n", euid=1000))
    assert finding.level is Level.FAIL and "need root" in finding.found


def test_this_hosts_cgroups_pass_on_whichever_version_it_runs():
    finding = checkup.cgroups(Host())
    v2 = (hierarchy.ROOT / "cgroup.controllers").exists()
    assert finding.level in (Level.OK, Level.WARN), finding
    assert finding.found.startswith("cgroup v2" if v2 else "cgroup v1"), finding


def test_seccomp_needs_its_actions_and_x86_64(tmp_path):
    host = sysctls(tmp_path, kernel__seccomp__actions_avail="kill_thread trap errno allow")
    assert "kill_process" in checkup.seccomp(host).found
    assert checkup.seccomp(Host(machine="aarch64")).level is Level.FAIL
    assert checkup.seccomp(Host()).level is Level.OK


def test_an_old_bubblewrap_fails_and_a_missing_one_says_what_to_install(tmp_path):
    old = write(tmp_path / "bwrap", "#!/bin/sh\necho bubblewrap 0.6.1\n")
    old.chmod(old.stat().st_mode | stat.S_IEXEC)
    found = {"bwrap": str(old), "setpriv": "/usr/bin/setpriv"}
    finding = checkup.bubblewrap(Host(which=found.get))
    assert finding.level is Level.FAIL and "0.6.1 is older than 0.8.0" in finding.found
    finding = checkup.bubblewrap(Host(which=lambda name: None))
    assert finding.level is Level.FAIL and "apt-get install bubblewrap" in finding.fix
    assert checkup.bubblewrap(Host()).level is Level.OK


def slow(seconds: float, outcome: RunOutcome = RunOutcome.EXITED):
    """A fake backend whose every run takes `seconds` and ends with `outcome`, printing ok."""

    def respond(request: RunRequest) -> RunResult:
        time.sleep(seconds)
        return RunResult(outcome, stdout=b"ok\n", exit_code=0, duration_ms=int(seconds * 1000))

    return FakeSandbox(respond)


@pytest.mark.parametrize(
    ("sandbox", "level", "said"),
    [
        (slow(0.0), Level.OK, " ms"),
        (slow(0.15), Level.WARN, "slow: more than 100 ms"),
        (slow(0.35), Level.WARN, "more than a lesson's default time limit (300 ms)"),
        (slow(0.0, RunOutcome.TIMEOUT), Level.FAIL, "a run ended timeout"),
    ],
)
def test_the_timed_runs_warn_when_slow_and_fail_when_broken(sandbox, level, said):
    finding = checkup.run_time("cold run", sandbox, slow_ms=100, limit_ms=300)
    assert finding.level is level and said in finding.found, finding
    assert sandbox.requests[0].limits.time_s == 60  # measured, not cut off at a lesson's limit


def test_a_tree_without_matplotlib_is_a_warning_that_says_how_to_rebuild(tmp_path):
    (tmp_path / "usr" / "bin").mkdir(parents=True)
    (tmp_path / "usr" / "bin" / "python3").write_text("")
    manifest = tmp_path / "codeblanks-runtime.json"
    manifest.write_text('{"recipe": "v1", "python": "3.11.2", "numpy": "1.24.2"}')
    old = checkup.runtime_tree(Runtime(tmp_path))
    assert old.level is Level.WARN and "no matplotlib" in old.found
    assert "runtime/build.sh" in old.fix
    manifest.write_text('{"python": "3.11.2", "numpy": "1.24.2", "matplotlib": "3.6.3", '
                        '"drawing": "35a25d93583eebaf"}')  # fmt: skip
    new = checkup.runtime_tree(Runtime(tmp_path))
    assert new.level is Level.OK and "matplotlib 3.6.3" in new.found


def test_a_missing_runtime_tree_fails(tmp_path):
    finding = checkup.runtime_tree(Runtime(tmp_path / "nothing"))
    assert finding.level is Level.FAIL and "runtime/build.sh" in finding.fix


@pytest.mark.bwrap
def test_codeblanks_doctor_checks_this_host_and_times_a_cold_and_a_warm_run():
    done = codeblanks("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    # a check's line is "LEVEL  NAME: what was found"; a warning's or failure's "fix:" follows
    checks = [line.split(":")[0].split(None, 1) for line in done.stdout.splitlines()[1:-1]]
    shown = {c[1]: c[0] for c in checks if len(c) == 2 and c[0] in ("ok", "warn", "fail")}
    assert set(shown) == {
        "user namespaces",
        "cgroups",
        "seccomp",
        "bubblewrap",
        "runtime tree",
        "cold run",
        "warm run",
    }, done.stdout
    assert "fail" not in shown.values() and done.stdout.splitlines()[-1].startswith("all 7")


def test_a_worker_on_a_host_that_fails_the_check_refuses_to_start(tmp_path):
    env = {"CODEBLANKS_RUNTIME_DIR": str(tmp_path / "no-runtime")}
    try:
        done = codeblanks_in(tmp_path, "worker", env=env, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the worker started on a host that fails the host check")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "fails the host check; not starting" in done.stderr
    assert f"fail  runtime tree: the sandbox runtime tree {tmp_path / 'no-runtime'}" in done.stderr
    assert "fix: bash runtime/build.sh" in done.stderr


def test_the_workers_check_reads_the_configured_runtime():
    findings = checkup.examine("warm", Runtime(Settings.from_env().runtime_dir), timed=False)
    assert not checkup.failed(findings), checkup.report(findings)
