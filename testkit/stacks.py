"""A compose deployment with the demo LMS, brought up for a test or a benchmark and torn down
(containers, networks, volumes, the warm pools' cgroup directories on the host), and its
students: real LTI launches through the demo LMS, submissions through the API, and the store
read in its PostgreSQL container."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import requests

from demo.browser import run_launch
from demo.lms_models import LoginInitiation
from testkit import slowness
from testkit.servers import REPO

T = TypeVar("T")
EXAMPLE = REPO / ".env.example"
COMPOSE = REPO / "docker-compose.yml"
DEMO = REPO / "docker" / "compose.demo.yml"
TWO_HOSTS = REPO / "docker" / "compose.two-hosts.yml"
LOCAL_BASE = "codeblanks-runtime:bookworm"
HOST_CGROUP = Path("/sys/fs/cgroup")
READY_TIMEOUT_S = 120


def compose_command() -> list[str]:
    """Return the compose command here: the v2 plugin, else Debian's docker-compose (v1)."""
    try:
        v2 = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        v2 = None
    if v2 is not None and v2.returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    raise RuntimeError("no compose command: run scripts/setup.sh (apt package docker-compose)")


def compose_variables() -> set[str]:
    """Return the names of the variables that the compose files read (`${NAME...}`)."""
    files = [COMPOSE, *(REPO / "docker").glob("compose.*.yml")]
    return {name for path in files for name in re.findall(r"\$\{(\w+)", path.read_text())}


def clean_environment(**extra: str) -> dict[str, str]:
    """Return this process's environment without the variables the compose files read, so that
    only the env file given sets them (compose prefers the environment's)."""
    read = compose_variables() | {"BASE", "BUILD_NETWORK", "ENV_FILE"}
    return {**{k: v for k, v in os.environ.items() if k not in read}, **extra}


def env_file(path: Path, **values: str) -> Path:
    """Write .env.example with `values` replacing its settings of the same names, to `path`."""
    text = EXAMPLE.read_text()
    for name, value in values.items():
        text, count = re.subn(rf"^#?{name}=.*$", f"{name}={value}", text, flags=re.M)
        assert count == 1, f"{name} is not in .env.example"
    path.write_text(text)
    return path


def volumes(service: dict[str, Any]) -> list[str]:
    """Return a service's mounts as SOURCE:TARGET strings (v1 prints strings, v2 mappings)."""
    found = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            volume = f"{volume['source']}:{volume['target']}"
        found.append(volume.removesuffix(":rw"))
    return found


@dataclass
class Stack:
    """A compose project of the demo deployment on a loopback port."""

    url: str
    project: str
    env_file: Path
    files: list[Path]
    pools: set[str] = field(default_factory=set)  # the warm pools seen, for the clean-up

    @classmethod
    def make(cls, workdir: Path, project: str, port: int, files: list[Path]) -> Stack:
        """Describe a stack of `files` on `port`, its env file in `workdir` (not started)."""
        url = f"http://127.0.0.1:{port}"
        env = env_file(
            workdir / ".env",
            CODEBLANKS_BASE_URL=url, HTTP_PORT=str(port), BASE=LOCAL_BASE,
            POSTGRES_PASSWORD=f"pg{os.urandom(12).hex()}",
            REDIS_PASSWORD=f"rd{os.urandom(12).hex()}",
            # the emulated Debian 12 guest (88x) had a service unhealthy when compose gave up on it
            HEALTH_START_PERIOD=f"{int(slowness.scaled(120))}s",
            # and a pg_isready or a python3 check there took longer than 3 s, then 5 s, to answer
            HEALTH_TIMEOUT=f"{int(slowness.scaled(5))}s",
        )  # fmt: skip
        return cls(url, project, env, files)

    def compose(
        self, *args: str, timeout: float = 120, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a compose command on this project; return the finished process."""
        files = [arg for path in self.files for arg in ("-f", str(path))]
        done = subprocess.run(
            [*compose_command(), "--env-file", str(self.env_file), "-p", self.project, *files,
             *args],
            cwd=REPO, capture_output=True, text=True, timeout=slowness.scaled(timeout),
            env=clean_environment(),
        )  # fmt: skip
        if check and done.returncode != 0:
            raise AssertionError(f"compose {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        return done

    def up(self, *args: str) -> None:
        """Start the stack (images built already) and wait until the web app is ready."""
        self.compose("up", "-d", "--no-build", *args, timeout=300)
        deadline = time.monotonic() + slowness.scaled(READY_TIMEOUT_S)
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                answer = requests.get(self.url + "/readyz", timeout=5)
                if answer.status_code == 200:
                    return
                last = answer.text
            except requests.RequestException as exc:
                last = repr(exc)
            time.sleep(1)
        raise AssertionError(f"/readyz never answered 200 (last: {last}):\n{self.logs()}")

    def down(self) -> None:
        """Remove the containers, networks and volumes, and the pools' cgroup directories."""
        self.remember_pools()
        done = self.compose("down", "-v", "--remove-orphans", "-t", "20", check=False)
        for pool in self.pools:
            for directory in HOST_CGROUP.glob(f"*/{pool}"):
                for run in directory.iterdir():
                    if run.is_dir():
                        run.rmdir()
                directory.rmdir()
        assert done.returncode == 0, done.stdout + done.stderr

    def remember_pools(self) -> None:
        """Note the warm pools' names (each worker's pool-id, in its lock volume)."""
        for service in ("worker", "worker-a", "worker-b"):
            for container in self.containers(service):
                done = subprocess.run(
                    ["docker", "exec", container, "cat", "/run/codeblanks/slots/pool-id"],
                    capture_output=True, text=True,
                )  # fmt: skip
                if done.returncode == 0:
                    self.pools.add(f"codeblanks-pool-{done.stdout.strip()}")

    def containers(self, service: str) -> list[str]:
        """Return the ids of the service's running containers, or none if there is no such."""
        done = self.compose("ps", "-q", service, check=False)
        return done.stdout.split() if done.returncode == 0 else []

    def sql(self, query: str) -> list[list[str]]:
        """Run a query in the PostgreSQL container; return its rows as lists of strings."""
        (container,) = self.containers("postgres")
        done = subprocess.run(
            ["docker", "exec", container, "psql", "-U", "codeblanks", "-d", "codeblanks",
             "-AtF", "\t", "-c", query],
            capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        return [line.split("\t") for line in done.stdout.splitlines()]

    def logs(self, *services: str) -> str:
        """Return the end of the services' logs (every service's by default)."""
        done = self.compose("logs", "--no-color", "--tail", "60", *services, check=False)
        return done.stdout + done.stderr


@dataclass
class Student:
    """A demo student's session in a placement, from a real LTI launch."""

    browser: requests.Session
    headers: dict[str, str]
    placement_id: int


def launch(stack: Stack, user: str, title: str = "What is attention?") -> Student:
    """Launch `user` (ali, berna or can) into the demo course's lesson called `title`."""
    browser = requests.Session()
    # the web app registers its demo LMS by dynamic registration once it serves
    links = poll(
        lambda: browser.get(stack.url + "/demo/admin/links", timeout=10).json(),
        bool,
        "the demo LMS's registration and its links",
    )
    (link,) = [entry["id"] for entry in links if entry["title"] == title]
    # the course page shows the lesson and the user's launch of it
    course = browser.get(stack.url + "/demo/", timeout=10)
    assert course.status_code == 200 and title in course.text
    launch_link = f'href="/demo/launch/{link}?user=demo-{user}&amp;lang=en"'
    assert launch_link in course.text, course.text[:2000]
    initiation = browser.get(
        stack.url + "/demo/admin/launch", params={"link": link, "user": user}, timeout=10
    ).json()
    trace = run_launch(
        browser,
        LoginInitiation(initiation["login_url"], initiation["method"], initiation["params"]),
    )
    assert trace.launch.status_code == 302, trace.launch.text[:500]
    location = urlsplit(trace.launch.headers["Location"])
    assert location.path.startswith("/lessons/")
    headers = {"X-CodeBlanks-Session": dict(parse_qsl(location.query))["s"]}
    return Student(browser, headers, int(location.path.rsplit("/", 1)[1]))


def submit(stack: Stack, student: Student, source: str, api: requests.Session) -> int:
    """POST a submission through the API (the header alone signs in); return its id."""
    submitted = api.post(
        f"{stack.url}/api/placements/{student.placement_id}/submissions",
        json={"source": source},
        headers=student.headers,
        timeout=30,
    )
    assert submitted.status_code == 202, submitted.text
    body = submitted.json()
    assert body["url"] == f"/api/submissions/{body['id']}", body
    return int(body["id"])


def graded(
    stack: Stack, student: Student, submission: int, api: requests.Session
) -> dict[str, Any]:
    """Wait until the submission is graded; return it as the API shows it to its student."""
    url = f"{stack.url}/api/submissions/{submission}"
    found: dict[str, Any] = poll(
        lambda: api.get(url, headers=student.headers, timeout=10).json(),
        lambda found: found["status"] == "graded",
        "the submission to be graded",
    )
    return found


def poll(fetch: Callable[[], T], done: Callable[[T], bool], what: str, timeout: float = 90) -> T:
    """Call `fetch` until `done` holds for what it returns; return that, or fail after
    `timeout` seconds naming `what`."""
    timeout = slowness.scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last: {value}")
        time.sleep(0.25)
