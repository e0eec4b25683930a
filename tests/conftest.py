import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.lessons import Catalog, load_catalog
from service.settings import Settings
from service.store import Store
from service.store.migrate import upgrade
from service.web import extensions
from testkit import factories
from testkit.servers import PostgresCluster, RedisServer
from tests.workers.sandbox.leftovers import bwrap_leftovers, settled
from workers.sandbox.bwrap import BwrapSandbox
from workers.sandbox.runtime import Runtime
from workers.sandbox.warm import WarmSandbox

REPO = Path(__file__).resolve().parent.parent
LESSONS = REPO / "lessons"
SEED = LESSONS / factories.SEED


def pytest_report_header() -> str:
    """Say how far the timed tests' bounds are stretched on this host (testkit/slowness.py)."""
    from testkit import slowness

    return f"slowness: {slowness.factor():g}x the reference host (timed bounds scaled by it)"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--screenshots",
        metavar="DIR",
        help="where the browser tests save their screenshots (docs/screenshots refreshes the "
        "README's); by default a temporary directory, so that tests leave the tree clean",
    )


@pytest.fixture(scope="session")
def screenshots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory the browser tests' screenshots go to."""
    chosen = request.config.getoption("--screenshots")
    found = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    found.mkdir(parents=True, exist_ok=True)
    return found


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A private PostgreSQL cluster for the whole test session."""
    cluster = PostgresCluster()
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A private, empty redis-server for one test."""
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(LESSONS)


@pytest.fixture
def seed_copy(tmp_path: Path) -> Path:
    """A writable copy of the seed lesson, at tmp/expert/what-is-attention."""
    target = tmp_path / "expert" / "what-is-attention"
    shutil.copytree(SEED, target)
    return target


@pytest.fixture(scope="session")
def bwrap() -> BwrapSandbox:
    """The real bwrap backend on the configured runtime tree; fails loudly if unusable."""
    sandbox = BwrapSandbox(Runtime(Settings.from_env().runtime_dir))
    sandbox.check()
    return sandbox


@pytest.fixture(scope="session")
def warm() -> Iterator[WarmSandbox]:
    """The real warm pool on the configured runtime tree, started; closed after the session."""
    sandbox = WarmSandbox(Runtime(Settings.from_env().runtime_dir))
    sandbox.check()
    sandbox.start()
    yield sandbox
    sandbox.close()


@pytest.fixture
def clean_host(bwrap: BwrapSandbox):
    """Assert that the test's runs left nothing (another codeblanks's runs are not looked at)."""
    yield
    assert settled(lambda: bwrap_leftovers(bwrap)) == []
    assert os.path.exists("/etc/hostname")


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """The store: SQLite in the test's temp dir (tests/service/store runs on PostgreSQL too)."""
    return f"sqlite:///{tmp_path / 'codeblanks.db'}"


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated, empty store of its own (page tests take the app's: two_stores.store)."""
    store = Store(database_url)
    upgrade(store)
    yield store
    store.dispose()


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Settings for one test: its own instance dir and database; Redis refuses connections."""
    return factories.settings_in(tmp_path, database_url=database_url)


@pytest.fixture
def celery_app():
    """The Celery app the test's app sends through: None, the app's own (its Redis refuses);
    a module that reads what is sent overrides it (tests.service.sessions.celery_app)."""
    return None


@pytest.fixture
def app(settings: Settings, celery_app):
    """The Flask app on a fresh, migrated database."""
    from service.web import create_app

    app = create_app({"TESTING": True, "SETTINGS": settings}, celery_app=celery_app)
    yield app
    extensions.store(app).dispose()


@pytest.fixture
def client(app):
    """A test client of the app."""
    return app.test_client()


@pytest.fixture(scope="session")
def docker_daemon(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A Docker daemon (started if none answers, and left running) and the runner image."""
    from tests import dockerd

    try:
        dockerd.start(tmp_path_factory.mktemp("dockerd") / "dockerd.log")
        dockerd.build_image()
    except RuntimeError as exc:
        pytest.fail(str(exc))
