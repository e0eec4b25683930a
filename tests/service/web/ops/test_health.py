from dataclasses import replace

import pytest

from service.store import Store


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
    app.config["SETTINGS"] = replace(app.config["SETTINGS"], redis_url=redis_server.url)
    app.extensions["celery"].conf.broker_url = redis_server.url
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["checks"] == {
        "database": "ok",
        "redis": "ok",
        "workers": "no worker answered",
    }


def test_readyz_is_503_when_the_database_is_unreachable(app, client):
    app.extensions["store"] = Store("postgresql+psycopg://nobody@127.0.0.1:9/none")
    checks = client.get("/readyz").get_json()["checks"]
    assert checks["database"].startswith("unreachable")
