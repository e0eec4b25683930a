from collections.abc import Iterator
from pathlib import Path

import pytest

from service.store import Store
from service.store.migrate import upgrade


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every store test runs on SQLite and on a private PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("postgres_cluster").new_database()


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated, empty store."""
    store = Store(database_url)
    upgrade(store)
    yield store
    store.dispose()
