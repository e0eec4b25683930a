"""The docker-compose deployment: the file validates, its images build from the local base
with no registry, and a smoke run in real containers grades a demo LMS student's submission on
the worker's warm pool (no Docker socket, nothing root on the host) and posts the grade back to
the demo LMS; a submission inside that worker's sandbox finds nothing of the worker's; nginx
in front keeps /healthz answering while two hundred clients trickle their requests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml

from service.settings import Settings
from service.web import MAX_BODY
from service.web.buffering import HEAD_S
from testkit import slowness
from testkit.servers import free_port
from testkit.stacks import (
    COMPOSE,
    DEMO,
    EXAMPLE,
    LOCAL_BASE,
    REPO,
    Stack,
    Student,
    compose_variables,
    env_file,
    graded,
    launch,
    poll,
    submit,
    volumes,
)
from tests.tricklers import Tricklers
from workers.sandbox import cgroups

pytestmark = pytest.mark.docker

DOCKER_SANDBOX = REPO / "docker" / "compose.docker-sandbox.yml"
SERVICES = {"web", "proxy", "worker", "sync-worker", "redis", "postgres"}
PROXY_CONF = REPO / "docker" / "proxy.conf"
# what the worker's entrypoint needs for its first moments (docs/operations.md), and no more
WORKER_CAPS = {"CHOWN", "DAC_OVERRIDE", "SETUID", "SETGID", "SYS_ADMIN"}
SLOT_UID_SHIFT = Settings().slot_uid_shift  # the compose worker sets none
WARM_FIRST_UID = 62000
IMAGES = ["codeblanks-app", "codeblanks-proxy", "codeblanks-redis", "codeblanks-postgres"]
IMAGES += ["codeblanks-runner"]
SEED = "expert/what-is-attention"


def config(*overrides: Path, env_file: Path = EXAMPLE, check: bool = True):
    """Run `compose config` on the compose file and `overrides` with an env file (the example's
    by default); return the finished process.

    Compose reads the worker's seccomp profile, which docker/build.sh makes: a test that needs
    a valid configuration asks for the `images` fixture (a fresh clone has no profile yet).
    """
    files = [COMPOSE, *overrides]
    return Stack("", "codeblanks-config", env_file, files).compose("config", check=check)


def test_the_compose_file_validates_with_the_example_env(images):
    settings = yaml.safe_load(config().stdout)
    assert set(settings["services"]) == SERVICES
    web, worker = settings["services"]["web"], settings["services"]["worker"]
    syncs = settings["services"]["sync-worker"]
    assert web["command"][:2] == ["codeblanks", "serve"]
    for service in (web, worker, syncs):
        assert service["environment"]["CODEBLANKS_DATABASE_URL"].startswith(
            "postgresql+psycopg://codeblanks:change-this-postgres-password@postgres:5432/"
        )
        assert any(v.endswith(":/var/lib/codeblanks/instance") for v in volumes(service))
    assert not any("docker.sock" in v for v in volumes(web))
    for name in ("web", "proxy", "redis", "postgres"):
        assert settings["services"][name]["healthcheck"]["test"], name
    assert web["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert set(settings["volumes"]) == {"instance", "redis", "postgres", "sandbox-locks"}
    demo = yaml.safe_load(config(DEMO).stdout)
    for name in ("worker", "sync-worker"):
        assert demo["services"][name]["network_mode"] == "service:web"
        # the workers reach the demo LMS on loopback, and nothing else of the kind
        allow = demo["services"][name]["environment"]["CODEBLANKS_OUTBOUND_ALLOW"]
        assert allow == f"127.0.0.1:{demo['services']['proxy']['environment']['PORT']}"
    assert str(demo["services"]["web"]["environment"]["CODEBLANKS_DEMO"]) == "1"
    assert demo["services"]["web"]["command"][-2:] == ["--workers", "1"]


def test_every_health_check_waits_as_long_as_the_host_asks(images, tmp_path):
    # under emulation (the Debian 12 guest, 25-88x) a pg_isready took over its 3 s and a
    # python3 check over its 5 s, and compose gave up on a service that was starting fine
    env = env_file(tmp_path / ".env", HEALTH_START_PERIOD="777s", HEALTH_TIMEOUT="77s")
    for overrides in ([], [DEMO], [REPO / "docker" / "compose.two-hosts.yml"]):
        services = yaml.safe_load(config(*overrides, env_file=env).stdout)["services"]
        checked = {name for name, service in services.items() if "healthcheck" in service}
        assert {"web", "proxy", "redis", "postgres"} <= checked, overrides
        for name in checked:
            check = services[name]["healthcheck"]
            assert (check["start_period"], check["timeout"]) == ("777s", "77s"), name
            # no second, fixed limit inside the check itself
            assert "timeout=" not in " ".join(check["test"]), name


def test_nginx_is_the_way_in_with_the_app_s_limits(images):
    for overrides in ([], [DEMO], [REPO / "docker" / "compose.two-hosts.yml"]):
        services = yaml.safe_load(config(*overrides).stdout)["services"]
        web, proxy = services["web"], services["proxy"]
        # the app listens on loopback only, in the namespace that nginx shares with it
        assert web["command"][2:6] == ["--host", "127.0.0.1", "--port", "5000"], overrides
        assert proxy["network_mode"] == "service:web"
        assert proxy["environment"]["APP"] == "127.0.0.1:5000"
        assert proxy["cap_drop"] == ["ALL"]
    conf = PROXY_CONF.read_text()
    setting = dict(re.findall(r"^\s*(client_\w+|proxy_request_buffering) (\S+);$", conf, re.M))
    assert setting["client_max_body_size"] == f"{MAX_BODY // 1024 // 1024}m"
    assert setting["client_header_timeout"] == f"{HEAD_S:g}s"
    assert setting["proxy_request_buffering"] == "on"
    # the live status streams go out unbuffered
    events = re.search(r"location ~ \^/api/submissions/.*?events\$ \{(.*?)\}", conf, re.S)
    assert events and "proxy_buffering off;" in events.group(1)
    # a client's own forwarding headers are replaced or removed, never passed on
    for header in ("X-Forwarded-For $proxy_add_x_forwarded_for", "X-Forwarded-Proto @SCHEME@"):
        assert f"proxy_set_header {header};" in conf
    for header in ("X-Forwarded-Host", "X-Forwarded-Port", "X-Forwarded-Prefix", "Forwarded"):
        assert f'proxy_set_header {header} "";' in conf


def test_the_worker_grades_on_the_warm_pool_with_no_socket_and_few_grants(images):
    worker = yaml.safe_load(config().stdout)["services"]["worker"]
    assert worker["environment"]["CODEBLANKS_SANDBOX"] == "warm"
    assert worker["command"] == ["codeblanks", "worker", "--queues", "grade"]
    assert worker["entrypoint"][-2:] == ["-m", "workers.sandbox.userns_entry"]
    assert not any("docker.sock" in v for v in volumes(worker))
    assert worker["cap_drop"] == ["ALL"] and set(worker["cap_add"]) == WORKER_CAPS
    assert not worker.get("privileged") and "pid" not in worker and "userns_mode" not in worker
    assert sorted(worker["security_opt"]) == [
        "apparmor:unconfined", "no-new-privileges:true", "seccomp:./docker/seccomp-worker.json",
    ]  # fmt: skip
    mounts = volumes(worker)
    assert "/sys/fs/cgroup:/run/codeblanks/host-cgroup" in mounts
    # one lock volume, at the cold backend's and the warm pool's lock dirs, for every replica
    assert {
        "sandbox-locks:/run/codeblanks/slots",
        "sandbox-locks:/run/codeblanks/warm/slots",
    } <= set(mounts)
    assert "runner" not in worker.get("depends_on", {})


def test_grade_posts_have_a_worker_of_their_own_without_the_sandbox_s_grants(images):
    syncs = yaml.safe_load(config().stdout)["services"]["sync-worker"]
    assert syncs["command"] == ["codeblanks", "worker", "--queues", "sync"]
    assert "entrypoint" not in syncs  # the image's: the codeblanks user, as the web app
    assert not syncs.get("cap_add") and not syncs.get("privileged")
    assert not any("docker.sock" in v or "cgroup" in v for v in volumes(syncs))
    assert int(syncs["environment"]["CODEBLANKS_SYNC_CONCURRENCY"]) >= 1


def test_the_docker_sandbox_override_brings_back_the_socket_and_the_runner(images):
    settings = yaml.safe_load(config(DOCKER_SANDBOX).stdout)
    assert set(settings["services"]) == SERVICES | {"runner"}
    worker = settings["services"]["worker"]
    assert worker["environment"]["CODEBLANKS_SANDBOX"] == "docker"
    assert "/var/run/docker.sock:/var/run/docker.sock" in volumes(worker)
    assert worker["entrypoint"] == ["/app/docker/app-entrypoint.sh"]
    assert worker["depends_on"]["runner"]["condition"] == "service_completed_successfully"
    assert not any("docker.sock" in v for v in volumes(settings["services"]["web"]))


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
    read = compose_variables()
    assert read, "the compose file reads no variables?"
    for name in sorted(read):
        # set (or shown commented out) right below a comment that explains it
        assert re.search(rf"^# .+\n#?{name}=", example, re.M), f"{name} is not documented"


def test_a_missing_secret_is_named(tmp_path):
    broken = tmp_path / ".env"
    broken.write_text(re.sub(r"^POSTGRES_PASSWORD=.*\n", "", EXAMPLE.read_text(), flags=re.M))
    done = config(env_file=broken, check=False)
    assert done.returncode != 0 and "set POSTGRES_PASSWORD in .env" in done.stdout + done.stderr


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


@pytest.fixture(scope="module")
def stack(images, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The whole deployment with the demo LMS, one worker, on a free loopback port; torn down
    (containers, network, volumes, the pool's cgroup directories) whatever happens."""
    workdir = tmp_path_factory.mktemp("smoke")
    running = Stack.make(workdir, f"codeblanks-smoke-{os.getpid()}", free_port(), [COMPOSE, DEMO])
    try:
        started = time.monotonic()
        running.up("--scale", "worker=1")
        print(f"the stack was ready {time.monotonic() - started:.1f} s after `up`")
        yield running
    finally:
        running.down()


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
def test_healthz_answers_through_nginx_while_two_hundred_clients_trickle(stack: Stack):
    port = int(stack.url.rsplit(":", 1)[1])
    tricklers = Tricklers(port, 200, every_s=2.0).start()
    try:
        time.sleep(3)
        for _ in range(10):
            started = time.monotonic()
            answer = requests.get(stack.url + "/healthz", timeout=slowness.scaled(5))
            assert answer.status_code == 200 and answer.headers["Server"] == "nginx"
            assert time.monotonic() - started < slowness.scaled(5)
        # nginx cuts each at its client_header_timeout, as the app would
        deadline = time.monotonic() + HEAD_S + slowness.scaled(5)
        while len(tricklers.cut()) < 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(tricklers.cut()) == 200, f"{200 - len(tricklers.cut())} still held"
    finally:
        tricklers.stop()


@pytest.mark.slow
def test_a_submission_in_the_compose_worker_finds_nothing_of_the_worker(stack: Stack):
    core_pattern = Path("/proc/sys/kernel/core_pattern").read_text()
    verdict = _submit(stack, launch(stack, "berna"), HOSTILE)["verdict"]
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


def _submit(stack: Stack, student: Student, source: str) -> dict:
    """Submit `source` through the API (no cookies: the header alone signs in); return the
    graded submission."""
    api = requests.Session()
    return graded(stack, student, submit(stack, student, source, api), api)


def _grade_a_launch(stack: Stack, catalog) -> None:
    student = launch(stack, "ali")
    exercise = catalog.lesson(SEED).exercise
    started = time.monotonic()
    submission = _submit(stack, student, exercise.solution[exercise.entrypoint])
    print(f"graded {time.monotonic() - started:.1f} s after it was submitted")
    verdict = submission["verdict"]
    assert (verdict["status"], verdict["score"]) == ("passed", 1.0), verdict

    def fully_graded(scores: list[dict]) -> bool:
        return any(s["body"]["gradingProgress"] == "FullyGraded" for s in scores)

    scores = poll(
        lambda: student.browser.get(stack.url + "/demo/admin/scores", timeout=10).json(),
        fully_graded,
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
    stack.remember_pools()
    assert len(stack.pools) == 1, f"the worker's pools: {stack.pools} (one pool-id wanted)"
    first = WARM_FIRST_UID + SLOT_UID_SHIFT
    slots = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            uid = int(re.search(r"^Uid:\s+(\d+)", status.read_text(), re.M).group(1))
        except (OSError, AttributeError):
            continue
        if first <= uid < first + 256:
            slots.append(int(status.parent.name))
    assert slots, "no warm zygote on the host"
    # cgroup v1: the pool's directory on the host; v2: the runs' parent in the container's
    # own cgroup (/system.slice/docker-ID.scope/codeblanks with the systemd driver)
    paths = {path for pid in slots if (path := cgroups.path_of(pid))}
    armed = [
        p for p in paths if re.search(r"/codeblanks(-pool-[0-9a-f]+)?/620\d\d-[0-9a-f]{8}$", p)
    ]
    assert armed, f"no armed run's cgroup in the pool's directory: {sorted(paths)}"
    logs = stack.compose("logs", "--no-color", "worker", check=False).stdout
    assert "cold sandbox" not in logs and "cannot start" not in logs, logs[-3000:]
    # nothing of the worker's container is root on the host once it runs
    top = stack.compose("top", "worker", check=False).stdout
    assert top.strip() and not re.search(r"^root\s", top, re.M), top
