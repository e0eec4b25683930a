"""Fixtures of the page tests, imported by each: each test runs on SQLite and on PostgreSQL."""

import pytest

from service.web import extensions
from tests.service.sessions import celery_app, sent  # noqa: F401  (fixtures, handed on)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path):
    """The store: SQLite, and a fresh database on the private PostgreSQL cluster."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'pages.db'}"
    return request.getfixturevalue("postgres_cluster").new_database()


@pytest.fixture
def store(app):
    """The app's store."""
    return extensions.store(app)
