"""The host check: what the sandbox needs of this machine, each part ok, warn or fail.

`codeblanks doctor` prints it (scripts/setup.sh runs it), and `codeblanks worker` runs it at
start and refuses to start on a host that fails it, saying why, rather than grade wrongly. Each
finding says in plain words what was found and, when something is missing, how to fix it.
What is read from the machine (its sysctls, its cgroup tree, its programs) comes through
`Host`, so that a test can hand it a fake one (a kernel this machine is not).
"""

from __future__ import annotations

import enum
import os
import platform
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import GraderError
from core.runs import Limits, RunOutcome, RunRequest, Sandbox
from workers.sandbox import hierarchy
from workers.sandbox.runtime import Runtime

BWRAP_MINIMUM = (0, 8, 0)  # --disable-userns, which the cold sandbox gives every run
SLOW_COLD_MS = 2000  # a cold run's start-up counts against the lesson's time limit
SLOW_WARM_MS = 250
_SYSCTL_FILE = "/etc/sysctl.d/60-codeblanks.conf"


class Level(enum.Enum):
    """How a check came out: fine, worth a look, or a reason not to grade here."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Finding:
    """One check's result: what it looked at, how it came out, what was found, how to fix it."""

    check: str
    level: Level
    found: str
    fix: str = ""


@dataclass(frozen=True)
class Host:
    """The parts of this machine the checks read; a test replaces them with fakes."""

    proc_sys: Path = Path("/proc/sys")
    cgroup_root: Path = hierarchy.ROOT
    self_cgroup: str | None = None  # /proc/self/cgroup's text, read when None
    euid: int = field(default_factory=os.geteuid)
    machine: str = field(default_factory=platform.machine)
    which: Callable[[str], str | None] = shutil.which


def user_namespaces(host: Host) -> Finding:
    """Check that a user without privileges may make user namespaces (bwrap's first step)."""
    name = "user namespaces"
    most = _sysctl(host, "user/max_user_namespaces")
    if most == "0":
        return Finding(
            name,
            Level.FAIL,
            "user.max_user_namespaces is 0: none may be made",
            _persist("user.max_user_namespaces=15000"),
        )
    if _sysctl(host, "kernel/unprivileged_userns_clone") == "0":
        return Finding(
            name,
            Level.FAIL,
            "kernel.unprivileged_userns_clone is 0: only root may make them",
            _persist("kernel.unprivileged_userns_clone=1"),
        )
    if _sysctl(host, "kernel/apparmor_restrict_unprivileged_userns") == "1":
        return Finding(
            name,
            Level.FAIL,
            "kernel.apparmor_restrict_unprivileged_userns is 1 (Ubuntu 23.10 and later): "
            "AppArmor lets only programs with a profile that allows it make user namespaces, "
            "and the sandbox's bwrap runs under each slot's own uid",
            _persist("kernel.apparmor_restrict_unprivileged_userns=0")
            + " (the sandbox's own seccomp filter still forbids runs to make user namespaces)",
        )
    limit = f" (at most {most})" if most else ""
    return Finding(name, Level.OK, f"users without privileges may make them{limit}")


def cgroups(host: Host) -> Finding:
    """Check that run cgroups can be made here, with the memory, pids and cpu controllers."""
    name = "cgroups"
    home = hierarchy.find(host.cgroup_root, host.self_cgroup)
    if host.euid != 0:
        return Finding(
            name,
            Level.FAIL,
            "per-run cgroups need root, and this is not root",
            "run the worker as root, or use the docker backend",
        )
    if home.problem is not None:
        return Finding(
            name,
            Level.FAIL,
            home.problem,
            "boot with the memory and pids controllers on (no cgroup_disable= on "
            "the kernel command line); systemd enables both by default",
        )
    where = ", ".join(sorted(str(p) for p in home.parents.values()))
    if home.version == 1:
        return Finding(name, Level.OK, f"cgroup v1; runs go under {where}")
    controllers = " ".join(sorted(home.controllers))
    if "cpu" not in home.controllers:
        return Finding(
            name,
            Level.WARN,
            f"cgroup v2 without the cpu controller at {home.base}: a run is not held to one core",
            "enable cpu for the worker's unit (systemd: CPUAccounting=yes)",
        )
    if home.delegated:
        return Finding(
            name,
            Level.OK,
            f"cgroup v2, delegated to this process: runs go under {where} ({controllers})",
        )
    return Finding(
        name,
        Level.WARN,
        f"cgroup v2 without delegation: runs go at the top of the tree, {where} ({controllers}), "
        "outside every systemd unit",
        "run the worker in a unit with Delegate=yes (docs/operations.md, 'cgroup v2 hosts'), "
        "or start it with systemd-run --scope -p Delegate=yes",
    )


def seccomp(host: Host) -> Finding:
    """Check that the kernel takes the sandbox's seccomp filter (x86-64, with these actions)."""
    name = "seccomp"
    actions = set(_sysctl(host, "kernel/seccomp/actions_avail").split())
    if host.machine != "x86_64":
        return Finding(
            name,
            Level.FAIL,
            f"the sandbox's filter is written for x86_64, not {host.machine}",
            "run the worker on an x86-64 machine",
        )
    missing = sorted({"allow", "errno", "kill_process"} - actions)
    if missing:
        return Finding(
            name,
            Level.FAIL,
            f"the kernel's seccomp lacks {', '.join(missing)}",
            "use a kernel built with CONFIG_SECCOMP_FILTER (Debian's and Ubuntu's are)",
        )
    return Finding(name, Level.OK, "filters with allow, errno and kill_process are available")


def bubblewrap(host: Host) -> Finding:
    """Check for bwrap (0.8.0 or later) and setpriv."""
    name = "bubblewrap"
    bwrap, setpriv = host.which("bwrap"), host.which("setpriv")
    if bwrap is None or setpriv is None:
        missing = " and ".join(n for n, p in (("bwrap", bwrap), ("setpriv", setpriv)) if not p)
        return Finding(
            name, Level.FAIL, f"{missing} not found", "apt-get install bubblewrap util-linux"
        )
    try:
        shown = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Finding(name, Level.FAIL, f"{bwrap} --version failed: {exc}", "reinstall bubblewrap")
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", shown.stdout)
    version = tuple(int(n) for n in match.groups()) if match else (0, 0, 0)
    text = ".".join(map(str, version))
    if version < BWRAP_MINIMUM:
        return Finding(
            name,
            Level.FAIL,
            f"bubblewrap {text} is older than 0.8.0 (no --disable-userns)",
            "install bubblewrap 0.8.0 or later (Debian 12 and Ubuntu 24.04 ship it)",
        )
    return Finding(name, Level.OK, f"bubblewrap {text} at {bwrap}")


def runtime_tree(runtime: Runtime) -> Finding:
    """Check the runtime tree that every run's python3 and numpy come from."""
    try:
        runtime.check()
    except GraderError as exc:
        return Finding("runtime tree", Level.FAIL, str(exc), "bash runtime/build.sh")
    versions = runtime.versions()
    parts = ("python", "numpy", "matplotlib")
    shown = ", ".join(f"{k} {versions[k]}" for k in parts if k in versions)
    found = f"{runtime.root} ({shown or 'no manifest'})"
    if "drawing" not in versions:  # built by runtime/build.sh before its v2 recipe
        found += ": no matplotlib and no drawing hook, so a program that draws fails"
        return Finding("runtime tree", Level.WARN, found, "bash runtime/build.sh (it rebuilds)")
    return Finding("runtime tree", Level.OK, found)


def run_time(
    name: str,
    sandbox: Sandbox,
    slow_ms: int,
    runs: int = 2,
    limit_ms: int = int(Limits().time_s * 1000),
) -> Finding:
    """Run a tiny numpy program `runs` times and report the last run's time (the first warms
    up); a run gets a minute, so that a slow host is measured rather than cut off, and is
    compared with `limit_ms`, a lesson's default time limit."""
    limits = Limits(time_s=60)
    request = RunRequest({"main.py": b"import numpy\nprint('ok')\n"}, "main.py", limits)
    took_ms = 0
    try:
        for _ in range(runs):
            started = time.monotonic()
            result = sandbox.run(request)
            took_ms = int((time.monotonic() - started) * 1000)
            if result.outcome is not RunOutcome.EXITED or result.stdout != b"ok\n":
                why = result.stderr.decode(errors="replace").strip()[-300:]
                return Finding(
                    name,
                    Level.FAIL,
                    f"a run ended {result.outcome.value} after {took_ms} ms: {why}",
                    "see the checks above, and the worker's log",
                )
    except GraderError as exc:
        return Finding(name, Level.FAIL, str(exc), "see the checks above")
    if getattr(sandbox, "fallbacks", 0):
        return Finding(
            name,
            Level.FAIL,
            "the warm pool did not start: its runs went cold",
            "see the worker's log ('warm slot ... failed') and the checks above",
        )
    if took_ms > limit_ms:
        return Finding(
            name,
            Level.WARN,
            f"{took_ms} ms, more than a lesson's default time limit ({limit_ms} ms), which "
            "counts the start-up: such runs end as timeouts here",
            "a faster (or less loaded) machine; on this one, the warm backend",
        )
    if took_ms > slow_ms:
        return Finding(
            name,
            Level.WARN,
            f"{took_ms} ms (slow: more than {slow_ms} ms)",
            "a run's start-up counts against a lesson's time limit; check the machine's load",
        )
    return Finding(name, Level.OK, f"{took_ms} ms")


def examine(
    backend: str, runtime: Runtime, host: Host | None = None, timed: bool = True
) -> list[Finding]:
    """Check what `backend` needs here; with `timed`, also time a cold and a warm run."""
    host = host or Host()
    if backend == "docker":
        from workers.sandbox.docker import DockerSandbox

        try:
            DockerSandbox().check()
        except GraderError as exc:
            return [
                Finding("docker", Level.FAIL, str(exc), "start dockerd; runtime/build-image.sh")
            ]
        return [Finding("docker", Level.OK, "the daemon answers and has the runner image")]
    found = [check(host) for check in (user_namespaces, cgroups, seccomp, bubblewrap)]
    found.append(runtime_tree(runtime))
    if not timed or any(f.level is Level.FAIL for f in found):
        return found
    from workers.sandbox.bwrap import BwrapSandbox
    from workers.sandbox.warm import WarmSandbox

    cold = BwrapSandbox(runtime)
    try:
        found.append(run_time("cold run", cold, SLOW_COLD_MS))
    finally:
        cold.close()
    if backend == "warm":
        with WarmSandbox(runtime, slots=1) as pool:
            found.append(run_time("warm run", pool, SLOW_WARM_MS))
    return found


def report(findings: list[Finding]) -> str:
    """Return the findings as the lines `codeblanks doctor` prints, and a last line."""
    lines = []
    for finding in findings:
        lines.append(f"{finding.level.value:<5} {finding.check}: {finding.found}")
        if finding.fix and finding.level is not Level.OK:
            lines.append(f"      fix: {finding.fix}")
    failed = [f for f in findings if f.level is Level.FAIL]
    warned = [f for f in findings if f.level is Level.WARN]
    if failed:
        lines.append(
            f"{len(failed)} of {len(findings)} checks failed: the sandbox cannot run "
            "safely here, and a worker will not start"
        )
    else:
        lines.append(f"all {len(findings)} checks passed ({len(warned)} warnings)")
    return "\n".join(lines)


def failed(findings: list[Finding]) -> bool:
    """Return whether any check failed."""
    return any(f.level is Level.FAIL for f in findings)


def _sysctl(host: Host, name: str) -> str:
    try:
        return (host.proc_sys / name).read_text().strip()
    except OSError:
        return ""


def _persist(setting: str) -> str:
    name, value = setting.split("=", 1)
    return f"sysctl -w {name}={value}, and keep it with: echo {setting} >> {_SYSCTL_FILE}"
