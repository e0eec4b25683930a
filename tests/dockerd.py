"""Start a Docker daemon for the tests when none answers, and build the runner image."""

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# runs use --network none, so the daemon needs no bridge, no NAT and no iptables rules: the
# host's firewall and forwarding stay as they were
FLAGS = ["--iptables=false", "--ip-forward=false", "--ip-masq=false", "--bridge=none"]
# the default storage driver is overlay2; vfs works everywhere, only slower (a copy per run)
FALLBACK = ["--storage-driver=vfs"]


def answers(timeout: float = 10) -> bool:
    """Return whether `docker info` reaches a daemon."""
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def start(log: Path, wait_s: float = 60) -> int | None:
    """Start dockerd unless one answers; return its pid, or None if one was already running.

    The daemon is left running for later sessions (no Popen object: it would warn when
    collected while the daemon runs). Raises RuntimeError, with the end of the daemon's log,
    when no daemon comes up.
    """
    if answers():
        return None
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise RuntimeError("dockerd is not installed (scripts/setup.sh installs docker.io)")
    for extra in ([], FALLBACK):
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            pid = os.posix_spawn(
                dockerd,
                [dockerd, *FLAGS, *extra],
                dict(os.environ),
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, out, 1),
                    (os.POSIX_SPAWN_DUP2, out, 2),
                ],
                setsid=True,
            )
        finally:
            os.close(out)
        end = time.monotonic() + wait_s
        exited = False
        while time.monotonic() < end and not exited:
            if answers(timeout=2):
                return pid
            exited = os.waitpid(pid, os.WNOHANG) != (0, 0)
            time.sleep(0.25)
        if not exited:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        elif answers():
            return None  # another test session's daemon won the race for the pid file
        if "driver" not in log.read_text(errors="replace")[-2000:]:
            break  # not a storage driver problem: vfs would not help
    tail = log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"dockerd did not come up; the end of {log}:\n{tail}")


def build_image() -> None:
    """Build the runner image from the runtime tree (cached; imports the tree only if changed)."""
    done = subprocess.run(
        ["bash", str(REPO / "runtime" / "build-image.sh")], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"runtime/build-image.sh failed:\n{done.stdout}{done.stderr}")
