"""The sandbox under test, shared by the hostile and the case tests: every backend, one pool each.

To test another backend, add its name to BACKENDS_UNDER_TEST (and, if it needs a service
started first, the session fixture that starts it to SETUP). A backend that cannot run here
fails the suite: it is never skipped.
"""

from collections.abc import Iterator

import pytest

from core.errors import GraderError
from core.lessons import Catalog, Exercise, load_catalog
from core.runs import Sandbox
from service.settings import Settings
from testkit import slowness
from testkit.factories import SEED
from tests.conftest import LESSONS
from tests.workers.sandbox import docker_waits
from workers.sandbox import make_sandbox

BACKENDS_UNDER_TEST = ["bwrap", "docker", "warm"]
SETUP = {"docker": "docker_daemon"}
MARKS = {"bwrap": [pytest.mark.bwrap], "docker": [pytest.mark.docker], "warm": [pytest.mark.bwrap]}


@pytest.fixture(scope="session", autouse=True)
def _docker_waits_scaled() -> Iterator[None]:
    """Wait on docker as long as this host's slowness asks (see docker_waits.py)."""
    with docker_waits.scaled():
        yield


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The lessons, their time limits stretched to this host's slowness (testkit/slowness.py)."""
    return slowness.stretch_catalog(load_catalog(LESSONS))


@pytest.fixture
def seed(catalog: Catalog) -> Exercise:
    """The seed lesson's exercise, its limits stretched with the catalog's."""
    return catalog.lesson(SEED).exercise


@pytest.fixture(
    scope="session",
    params=[pytest.param(b, marks=MARKS.get(b, [])) for b in BACKENDS_UNDER_TEST],
)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """The backend under test, built as the worker builds it; fails if it cannot run here."""
    name = request.param
    if name in SETUP:
        request.getfixturevalue(SETUP[name])
    try:
        box = make_sandbox(name, Settings.from_env().runtime_dir, Settings.from_env().runner_image)
        getattr(box, "check", lambda: None)()
    except GraderError as exc:
        pytest.fail(f"the {name} sandbox backend is not available: {exc}")
    yield box
    getattr(box, "close", lambda: None)()
