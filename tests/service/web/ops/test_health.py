from dataclasses import replace

import pytest

from service.store import Store
from service.web import extensions
from testkit.apps import swap


def test_healthz(client):
    response = client.get("/healthz")
    assert (response.status_code, response.get_json()) == (200, {"status": "ok"})


def test_readyz_is_503_without_redis(client):
    response = client.get("/readyz")
    assert response.status_code == 503
    checks = response.get_json()["checks"]
    assert checks["database"] == "ok"
    assert checks["redis"].startswith("unreachable")
    assert checks["workers"] == "not asked: no redis"


@pytest.mark.redis
def test_readyz_is_503_with_redis_but_no_worker(app, client, redis_server):
    swap(app, settings=replace(extensions.settings(app), redis_url=redis_server.url))
    extensions.celery_app(app).conf.broker_url = redis_server.url
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"] == {
        "database": "ok",
        "redis": "ok",
        "workers": "no worker answered",
    }


def test_readyz_is_503_when_the_database_is_unreachable(app, client):
    swap(app, store=Store("postgresql+psycopg://nobody@127.0.0.1:9/none"))
    checks = client.get("/readyz").get_json()["checks"]
    assert checks["database"].startswith("unreachable")
