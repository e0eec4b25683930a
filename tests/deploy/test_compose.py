"""The docker-compose deployment: the file validates, its images build from the local base
with no registry, and a smoke run in real containers grades a demo LMS student's submission on
the worker's warm pool (no Docker socket, nothing root on the host) and posts the grade back to
the demo LMS; a submission inside that worker's sandbox finds nothing of the worker's."""

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
DOCKER_SANDBOX = [*FILES, "-f", str(REPO / "docker" / "compose.docker-sandbox.yml")]
SERVICES = {"web", "worker", "redis", "postgres"}
# what the worker's entrypoint needs for its first moments (docs/operations.md), and no more
WORKER_CAPS = {"CHOWN", "DAC_OVERRIDE", "SETUID", "SETGID", "SYS_ADMIN"}
HOST_CGROUP = Path("/sys/fs/cgroup")
SLOT_UID_SHIFT = 1_000_000  # workers/sandbox/userns_entry.py
WARM_FIRST_UID = 62000
IMAGES = ["codeblanks-app", "codeblanks-redis", "codeblanks-postgres", "codeblanks-runner"]
LOCAL_BASE = "codeblanks-runtime:bookworm"
SEED = "expert/what-is-attention"
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
    for service in (web, worker):
        assert service["environment"]["CODEBLANKS_DATABASE_URL"].startswith(
            "postgresql+psycopg://codeblanks:change-this-postgres-password@postgres:5432/"
        )
        assert any(v.endswith(":/var/lib/codeblanks/instance") for v in _volumes(service))
    assert not any("docker.sock" in v for v in _volumes(web))
    for name in ("web", "redis", "postgres"):
        assert config["services"][name]["healthcheck"]["test"], name
    assert web["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert set(config["volumes"]) == {"instance", "redis", "postgres", "sandbox-locks"}
    demo = yaml.safe_load(compose(*DEMO, "config").stdout)
    assert demo["services"]["worker"]["network_mode"] == "service:web"
    # the workers reach the demo LMS on loopback, and nothing else of the kind
    allow = demo["services"]["worker"]["environment"]["CODEBLANKS_OUTBOUND_ALLOW"]
    assert allow == f"127.0.0.1:{demo['services']['web']['command'][5]}"
    assert str(demo["services"]["web"]["environment"]["CODEBLANKS_DEMO"]) == "1"
    assert demo["services"]["web"]["command"][-2:] == ["--workers", "1"]


def test_the_worker_grades_on_the_warm_pool_with_no_socket_and_few_grants():
    worker = yaml.safe_load(compose(*FILES, "config").stdout)["services"]["worker"]
    assert worker["environment"]["CODEBLANKS_SANDBOX"] == "warm"
    assert worker["command"] == ["codeblanks", "worker"]
    assert worker["entrypoint"][-2:] == ["-m", "workers.sandbox.userns_entry"]
    assert not any("docker.sock" in v for v in _volumes(worker))
    assert worker["cap_drop"] == ["ALL"] and set(worker["cap_add"]) == WORKER_CAPS
    assert not worker.get("privileged") and "pid" not in worker and "userns_mode" not in worker
    assert sorted(worker["security_opt"]) == [
        "no-new-privileges:true", "seccomp:./docker/seccomp-worker.json",
    ]  # fmt: skip
    volumes = _volumes(worker)
    assert "/sys/fs/cgroup:/run/codeblanks/host-cgroup" in volumes
    # one lock volume, at the cold backend's and the warm pool's lock dirs, for every replica
    assert {
        "sandbox-locks:/run/codeblanks/slots",
        "sandbox-locks:/run/codeblanks/warm/slots",
    } <= set(volumes)
    assert "runner" not in worker.get("depends_on", {})


def test_the_docker_sandbox_override_brings_back_the_socket_and_the_runner():
    config = yaml.safe_load(compose(*DOCKER_SANDBOX, "config").stdout)
    assert set(config["services"]) == SERVICES | {"runner"}
    worker = config["services"]["worker"]
    assert worker["environment"]["CODEBLANKS_SANDBOX"] == "docker"
    assert "/var/run/docker.sock:/var/run/docker.sock" in _volumes(worker)
    assert worker["entrypoint"] == ["/app/docker/app-entrypoint.sh"]
    assert worker["depends_on"]["runner"]["condition"] == "service_completed_successfully"
    assert not any("docker.sock" in v for v in _volumes(config["services"]["web"]))


def test_the_worker_seccomp_profile_adds_only_the_namespace_calls(tmp_path):
    default = {
        "defaultAction": "SCMP_ACT_ERRNO",
        "syscalls": [
            {"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [],
             "includes": {}, "excludes": {}},
            {"names": ["bpf", "mount", "setns"], "action": "SCMP_ACT_ALLOW", "args": [],
             "includes": {"caps": ["CAP_SYS_ADMIN"]}, "excludes": {}},
            {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
             "args": [{"index": 0, "value": 2114060288, "op": "SCMP_CMP_MASKED_EQ"}],
             "includes": {}, "excludes": {"caps": ["CAP_SYS_ADMIN"]}},
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38, "args": [],
             "includes": {}, "excludes": {"caps": ["CAP_SYS_ADMIN"], "arches": ["mips64"]}},
        ],
    }  # fmt: skip
    (tmp_path / "default.json").write_text(json.dumps(default))
    subprocess.run(
        ["python3", str(REPO / "docker" / "seccomp.py"), "default.json", "worker.json"],
        cwd=tmp_path, check=True,
    )  # fmt: skip
    rules = json.loads((tmp_path / "worker.json").read_text())["syscalls"]
    allowed = [
        name for rule in rules if rule["action"] == "SCMP_ACT_ALLOW" for name in rule["names"]
    ]
    # bpf went with the CAP_SYS_ADMIN rule: the entrypoint's moment of SYS_ADMIN opens nothing
    assert sorted(allowed) == sorted(
        ["read", "clone", "unshare", "setns", "mount", "umount2", "pivot_root", "sethostname"]
    )
    clone3 = next(rule for rule in rules if rule["names"] == ["clone3"])
    assert clone3["errnoRet"] == 38 and clone3["excludes"] == {"arches": ["mips64"]}


def test_every_variable_of_the_compose_file_is_documented_in_the_example():
    example = EXAMPLE.read_text()
    files = [REPO / "docker-compose.yml", *(REPO / "docker").glob("compose.*.yml")]
    read = {name for path in files for name in re.findall(r"\$\{(\w+)", path.read_text())}
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
    # the warm pool's bubblewrap, and the runtime tree where the sandbox looks for it
    tree = "/var/lib/codeblanks/runtime/bookworm"
    found = _run(app, "sh", "-c", f"command -v bwrap; {tree}/usr/bin/python3 -c 'import numpy'")
    assert found == "/usr/bin/bwrap\n"
    assert (REPO / "docker" / "seccomp-worker.json").is_file()  # made by docker/build.sh
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
        pool = _pool(running)
        down = running.compose("down", "-v", "--remove-orphans", "-t", "20", check=False)
        # the pool's (empty) cgroup directories outlive the containers, as on a host
        for directory in HOST_CGROUP.glob(f"*/{pool}") if pool else []:
            for run in directory.iterdir():
                if run.is_dir():
                    run.rmdir()
            directory.rmdir()
        assert down.returncode == 0, down.stdout + down.stderr


def _pool(stack: Stack) -> str | None:
    """Return the name of the worker's warm pool (its cgroup directories on the host)."""
    done = stack.compose(
        "exec", "-T", "worker", "cat", "/run/codeblanks/slots/pool-id", check=False
    )
    return f"codeblanks-pool-{done.stdout.strip()}" if done.returncode == 0 else None


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
def test_smoke_a_demo_launch_is_graded_on_the_warm_pool_and_reaches_the_gradebook(
    stack: Stack, catalog
):
    try:
        _grade_a_launch(stack, catalog)
        _assert_graded_warm(stack)
    except Exception:
        print(stack.logs())
        raise


@pytest.mark.slow
def test_a_submission_in_the_compose_worker_finds_nothing_of_the_worker(stack: Stack):
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    launch = _launch(stack, "berna")
    verdict = _submit(stack, launch, HOSTILE)["verdict"]
    report = json.loads(verdict["stdout"])
    print(json.dumps(report, indent=1))
    # the worker's files, its state dir, its cgroups and the host's are not in the sandbox
    for path in ("/var/lib/codeblanks/instance", "/run/codeblanks", "/run/codeblanks/host-cgroup"):
        assert report[path] in ("FileNotFoundError", "PermissionError"), path
    assert report["/sys/fs/cgroup"] in ("FileNotFoundError", "PermissionError", []), report
    assert report["write core_pattern"] in ("PermissionError", "OSError: 30", "FileNotFoundError")
    assert len(report["processes"]) <= 3, report  # its own pid namespace: it and its supervisor
    assert report["uid"] != 0 and report["setuid 0"] != "DONE"
    assert Path("/proc/sys/kernel/core_pattern").read_text() == core_pattern


HOSTILE = """
import json, os
report = {"uid": os.getuid(), "me": os.getpid()}
for path in ["/var/lib/codeblanks/instance", "/run/codeblanks", "/run/codeblanks/host-cgroup",
             "/sys/fs/cgroup"]:
    try:
        report[path] = sorted(os.listdir(path))
    except OSError as exc:
        report[path] = type(exc).__name__
try:
    with open("/proc/sys/kernel/core_pattern", "w") as f:
        f.write("|/bin/sh -c id")
    report["write core_pattern"] = "WRITTEN"
except OSError as exc:
    report["write core_pattern"] = type(exc).__name__ if exc.errno != 30 else "OSError: 30"
try:
    os.setuid(0)
    report["setuid 0"] = "DONE"
except OSError as exc:
    report["setuid 0"] = type(exc).__name__
report["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(report))
"""


@dataclass
class Launch:
    """A demo student's session in a placement, from a real LTI launch."""

    browser: requests.Session
    headers: dict[str, str]
    placement_id: int


def _launch(stack: Stack, user: str) -> Launch:
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
    return Launch(browser, headers, int(location.path.rsplit("/", 1)[1]))


def _submit(stack: Stack, launch: Launch, source: str) -> dict:
    """Submit `source` through the API (no cookies: the header alone signs in); return the
    graded submission."""
    api = requests.Session()
    submitted = api.post(
        f"{stack.url}/api/placements/{launch.placement_id}/submissions",
        json={"source": source},
        headers=launch.headers,
        timeout=10,
    )
    assert submitted.status_code == 202, submitted.text
    url = stack.url + submitted.json()["url"]
    return _poll(
        lambda: api.get(url, headers=launch.headers, timeout=10).json(),
        lambda found: found["status"] == "graded",
        "the submission to be graded",
    )


def _grade_a_launch(stack: Stack, catalog) -> None:
    launch = _launch(stack, "ali")
    exercise = catalog.lesson(SEED).exercise
    started = time.monotonic()
    submission = _submit(stack, launch, exercise.solution[exercise.entrypoint])
    print(f"graded {time.monotonic() - started:.1f} s after it was submitted")
    verdict = submission["verdict"]
    assert (verdict["status"], verdict["score"]) == ("passed", 1.0), verdict

    def graded(scores: list[dict]) -> bool:
        return any(s["body"]["gradingProgress"] == "FullyGraded" for s in scores)

    scores = _poll(
        lambda: launch.browser.get(stack.url + "/demo/admin/scores", timeout=10).json(),
        graded,
        "the grade to reach the demo LMS",
    )
    # every score the tool posts is FullyGraded (Moodle blanks any other); the last one holds
    assert {s["body"]["gradingProgress"] for s in scores} == {"FullyGraded"}
    score = [s for s in scores if s["applied"]][-1]
    assert score["user_id"] == "demo-ali"
    assert score["body"]["scoreGiven"] == exercise.points  # the questions are unanswered
    assert score["body"]["scoreMaximum"] == catalog.lesson(SEED).points


def _assert_graded_warm(stack: Stack) -> None:
    """Check, from the host, that the worker's warm pool ran: its zygotes under the shifted slot
    uids, its armed runs' cgroups in the pool's directory, and no run sent to the cold backend."""
    pool = _pool(stack)
    assert pool, "the worker has no pool-id"
    directory = HOST_CGROUP / "memory" / pool
    armed = [run.name for run in directory.iterdir() if run.is_dir()]
    assert any(re.fullmatch(r"620\d\d-[0-9a-f]{8}", name) for name in armed), armed
    first = WARM_FIRST_UID + SLOT_UID_SHIFT
    owners = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            uid = int(re.search(r"^Uid:\s+(\d+)", status.read_text(), re.M).group(1))
        except (OSError, AttributeError):
            continue
        owners.add(uid)
    assert any(first <= uid < first + 256 for uid in owners), "no warm zygote on the host"
    logs = stack.compose("logs", "--no-color", "worker", check=False).stdout
    assert "cold sandbox" not in logs and "cannot start" not in logs, logs[-3000:]
    # nothing of the worker's container is root on the host once it runs
    top = stack.compose("top", "worker", check=False).stdout
    assert top.strip() and not re.search(r"^root\s", top, re.M), top


def _poll(fetch, done, what: str, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last: {value}")
        time.sleep(0.25)
