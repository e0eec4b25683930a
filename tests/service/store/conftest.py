from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every store test runs on SQLite and on a private PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("postgres_cluster").new_database()
