"""The docker-compose deployment: the file validates, its images build from the local base
with no registry, and a smoke run in real containers grades a demo LMS student's submission
and posts the grade back to the demo LMS."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests
import yaml

from service.demo.browser import run_launch
from service.demo.lms_models import LoginInitiation
from tests.servers import free_port

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLE = REPO / ".env.example"
FILES = ["-f", str(REPO / "docker-compose.yml")]
DEMO = [*FILES, "-f", str(REPO / "docker" / "compose.demo.yml")]
SERVICES = {"web", "worker", "runner", "redis", "postgres"}
IMAGES = ["codeblanks-app", "codeblanks-redis", "codeblanks-postgres", "codeblanks-runner"]
LOCAL_BASE = "codeblanks-runtime:bookworm"
SEED = "expert/what-is-attention"
BUILD_TIMEOUT_S = 1200  # a cold build downloads Debian packages for three images
READY_TIMEOUT_S = 120


def clean_environment(**extra: str) -> dict[str, str]:
    """Return this process's environment without the variables the compose file reads, so that
    only the env file given sets them (compose prefers the environment's)."""
    text = (REPO / "docker-compose.yml").read_text()
    read = set(re.findall(r"\$\{(\w+)", text)) | {"BASE", "BUILD_NETWORK", "ENV_FILE"}
    return {**{k: v for k, v in os.environ.items() if k not in read}, **extra}


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
    pytest.fail("no compose command: run scripts/setup.sh (apt package docker-compose)")


def compose(*args: str, env_file: Path = EXAMPLE, timeout: float = 120, check: bool = True):
    """Run compose in the repo root with an env file; return the finished process."""
    done = subprocess.run(
        [*compose_command(), "--env-file", str(env_file), *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout, env=clean_environment(),
    )  # fmt: skip
    if check and done.returncode != 0:
        raise AssertionError(f"compose {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done


def env_file(path: Path, **values: str) -> Path:
    """Write .env.example with `values` replacing its settings of the same names, to `path`."""
    text = EXAMPLE.read_text()
    for name, value in values.items():
        text, count = re.subn(rf"^#?{name}=.*$", f"{name}={value}", text, flags=re.M)
        assert count == 1, f"{name} is not in .env.example"
    path.write_text(text)
    return path


def test_the_compose_file_validates_with_the_example_env():
    config = yaml.safe_load(compose(*FILES, "config").stdout)
    assert set(config["services"]) == SERVICES
    web, worker = config["services"]["web"], config["services"]["worker"]
    assert web["command"][:2] == ["codeblanks", "serve"]
    assert worker["environment"]["CODEBLANKS_SANDBOX"] == "docker"
    for service in (web, worker):
        assert service["environment"]["CODEBLANKS_DATABASE_URL"].startswith(
            "postgresql+psycopg://codeblanks:change-this-postgres-password@postgres:5432/"
        )
        assert any(v.endswith(":/var/lib/codeblanks/instance") for v in _volumes(service))
    assert "/var/run/docker.sock:/var/run/docker.sock" in _volumes(worker)
    assert not any("docker.sock" in v for v in _volumes(web))
    for name in ("web", "redis", "postgres"):
        assert config["services"][name]["healthcheck"]["test"], name
    assert worker["depends_on"]["runner"]["condition"] == "service_completed_successfully"
    assert web["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert set(config["volumes"]) == {"instance", "redis", "postgres"}
    demo = yaml.safe_load(compose(*DEMO, "config").stdout)
    assert demo["services"]["worker"]["network_mode"] == "service:web"
    # the workers reach the demo LMS on loopback, and nothing else of the kind
    allow = demo["services"]["worker"]["environment"]["CODEBLANKS_OUTBOUND_ALLOW"]
    assert allow == f"127.0.0.1:{demo['services']['web']['command'][5]}"
    assert str(demo["services"]["web"]["environment"]["CODEBLANKS_DEMO"]) == "1"
    assert demo["services"]["web"]["command"][-2:] == ["--workers", "1"]


def test_every_variable_of_the_compose_file_is_documented_in_the_example():
    example = EXAMPLE.read_text()
    read = set(re.findall(r"\$\{(\w+)", (REPO / "docker-compose.yml").read_text()))
    assert read, "the compose file reads no variables?"
    for name in sorted(read):
        # set (or shown commented out) right below a comment that explains it
        assert re.search(rf"^# .+\n#?{name}=", example, re.M), f"{name} is not documented"


def test_a_missing_secret_is_named(tmp_path):
    broken = tmp_path / ".env"
    broken.write_text(re.sub(r"^POSTGRES_PASSWORD=.*\n", "", EXAMPLE.read_text(), flags=re.M))
    done = compose(*FILES, "config", env_file=broken, check=False)
    assert done.returncode != 0 and "set POSTGRES_PASSWORD in .env" in done.stdout + done.stderr


def _volumes(service: dict) -> list[str]:
    """Return a service's mounts as SOURCE:TARGET strings (v1 prints strings, v2 mappings)."""
    found = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            volume = f"{volume['source']}:{volume['target']}"
        found.append(volume.removesuffix(":rw"))
    return found


@pytest.fixture(scope="module")
def images(docker_daemon, tmp_path_factory: pytest.TempPathFactory) -> float:
    """Every image of the compose file, built by docker/build.sh; return the build's seconds."""
    env = env_file(tmp_path_factory.mktemp("build") / ".env")
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(REPO / "docker" / "build.sh")],
        cwd=REPO, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
        env=clean_environment(ENV_FILE=str(env)),
    )  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"docker/build.sh failed:\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return time.monotonic() - started


def _layers(image: str) -> list[str]:
    done = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{json .RootFS.Layers}}", image],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_images_build_from_the_local_base(images):
    print(f"docker/build.sh took {images:.0f} s")
    base = _layers(LOCAL_BASE)
    for image in IMAGES:
        assert _layers(image)[: len(base)] == base, f"{image} is not built on {LOCAL_BASE}"
    app = "codeblanks-app:latest"
    who = _run(app, "sh", "-c", "id -u; docker --version; codeblanks --help")
    assert who.startswith("10001\nDocker version ") and "serve" in who  # not root; the CLI
    numpy = _run("codeblanks-runner:latest", "/usr/bin/python3", "-c", "import numpy")
    assert numpy == ""


def _run(image: str, *argv: str) -> str:
    done = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", image, *argv],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass
class Stack:
    """A running compose project: where its web app answers, and how to reach compose."""

    url: str
    project: str
    env_file: Path

    def compose(self, *args: str, timeout: float = 120, check: bool = True):
        """Run a compose command on this project."""
        return compose(
            "-p", self.project, *DEMO, *args, env_file=self.env_file, timeout=timeout, check=check
        )

    def logs(self) -> str:
        """Return the end of every service's log."""
        done = self.compose("logs", "--no-color", "--tail", "60", check=False)
        return done.stdout + done.stderr


@pytest.fixture(scope="module")
def stack(images, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The whole deployment with the demo LMS, one worker, on a free loopback port; torn down
    (containers, network, volumes) whatever happens."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = env_file(
        tmp_path_factory.mktemp("smoke") / ".env",
        CODEBLANKS_BASE_URL=url, HTTP_PORT=str(port), BASE=LOCAL_BASE,
        POSTGRES_PASSWORD=f"pg{os.urandom(12).hex()}", REDIS_PASSWORD=f"rd{os.urandom(12).hex()}",
    )  # fmt: skip
    running = Stack(url, f"codeblanks-smoke-{os.getpid()}", env)
    try:
        started = time.monotonic()
        running.compose("up", "-d", "--no-build", "--scale", "worker=1", timeout=300)
        _wait_ready(running)
        print(f"the stack was ready {time.monotonic() - started:.1f} s after `up`")
        yield running
    finally:
        down = running.compose("down", "-v", "--remove-orphans", "-t", "20", check=False)
        assert down.returncode == 0, down.stdout + down.stderr


def _wait_ready(stack: Stack) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            answer = requests.get(stack.url + "/readyz", timeout=5)
            if answer.status_code == 200:
                return
            last = answer.text
        except requests.RequestException as exc:
            last = repr(exc)
        time.sleep(1)
    raise AssertionError(f"/readyz never answered 200 (last: {last}):\n{stack.logs()}")


@pytest.mark.slow
def test_smoke_a_demo_launch_is_graded_in_a_container_and_reaches_the_gradebook(
    stack: Stack, catalog
):
    try:
        _grade_a_launch(stack, catalog)
    except Exception:
        print(stack.logs())
        raise


def _grade_a_launch(stack: Stack, catalog) -> None:
    browser = requests.Session()
    # the web app registers its demo LMS by dynamic registration once it serves
    _poll(
        lambda: browser.get(stack.url + "/demo/admin/links", timeout=10).json(),
        bool,
        "the demo LMS's registration and its links",
    )
    course = browser.get(stack.url + "/demo/", timeout=10)
    assert course.status_code == 200 and "What is attention?" in course.text
    link = re.search(r'href="/demo/launch/([^"?]+)\?user=demo-ali"', course.text).group(1)
    initiation = browser.get(
        stack.url + "/demo/admin/launch", params={"link": link, "user": "ali"}, timeout=10
    ).json()
    trace = run_launch(
        browser,
        LoginInitiation(initiation["login_url"], initiation["method"], initiation["params"]),
    )
    assert trace.launch.status_code == 302, trace.launch.text[:500]
    location = urlsplit(trace.launch.headers["Location"])
    assert location.path.startswith("/lessons/")
    headers = {"X-CodeBlanks-Session": dict(parse_qsl(location.query))["s"]}
    placement_id = int(location.path.rsplit("/", 1)[1])

    exercise = catalog.lesson(SEED).exercise
    api = requests.Session()  # no cookies: the header alone signs in
    started = time.monotonic()
    submitted = api.post(
        f"{stack.url}/api/placements/{placement_id}/submissions",
        json={"source": exercise.solution[exercise.entrypoint]},
        headers=headers,
        timeout=10,
    )
    assert submitted.status_code == 202, submitted.text
    url = stack.url + submitted.json()["url"]
    submission = _poll(
        lambda: api.get(url, headers=headers, timeout=10).json(),
        lambda found: found["status"] == "graded",
        "the submission to be graded",
    )
    print(f"graded {time.monotonic() - started:.1f} s after it was submitted")
    verdict = submission["verdict"]
    assert (verdict["status"], verdict["score"]) == ("passed", 1.0), verdict

    def graded(scores: list[dict]) -> bool:
        return any(s["body"]["gradingProgress"] == "FullyGraded" for s in scores)

    scores = _poll(
        lambda: browser.get(stack.url + "/demo/admin/scores", timeout=10).json(),
        graded,
        "the grade to reach the demo LMS",
    )
    # every score the tool posts is FullyGraded (Moodle blanks any other); the last one holds
    assert {s["body"]["gradingProgress"] for s in scores} == {"FullyGraded"}
    score = [s for s in scores if s["applied"]][-1]
    assert score["user_id"] == "demo-ali"
    assert score["body"]["scoreGiven"] == exercise.points  # the questions are unanswered
    assert score["body"]["scoreMaximum"] == catalog.lesson(SEED).points


def _poll(fetch, done, what: str, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last: {value}")
        time.sleep(0.25)
