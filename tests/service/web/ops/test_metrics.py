import re
from dataclasses import replace

import pytest

from service.store import submissions
from service.store.models import utcnow
from service.web import extensions
from testkit.apps import swap
from testkit.factories import place, submission

TOKEN = "s3cret-metrics-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def settings(settings):
    return replace(settings, metrics_token=TOKEN)


def parse(text):
    """Return {name{labels}: value} from Prometheus text, checking every line's shape."""
    samples = {}
    for line in text.strip().splitlines():
        if line.startswith("# "):
            assert re.match(r"# (HELP|TYPE) codeblanks_\w+ .+", line), line
            continue
        name, value = line.rsplit(" ", 1)
        samples[name] = float(value)
    return samples


def test_metrics_count_from_the_database(app, client):
    store = extensions.store(app)
    # with an LMS line item: the failed grading's sync stays pending, for a sync task
    placed = place(store, line_item_url="https://lms.example/lineitems/1")
    first = submission(store, placed.placement_id, placed.user_id, "x", late=False)
    submission(store, placed.placement_id, placed.user_id, "y", late=False)
    claim = submissions.claim(store, first, 30, utcnow())
    submissions.fail(store, claim, "boom", utcnow())
    response = client.get("/metrics", headers=AUTH)
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    samples = parse(response.text)
    assert samples['codeblanks_submissions{status="queued"}'] == 1
    assert samples['codeblanks_submissions{status="graded"}'] == 1
    assert samples['codeblanks_sandbox_runs_total{outcome="error"}'] == 1
    assert samples["codeblanks_grading_latency_seconds_count"] == 1
    assert samples['codeblanks_grading_latency_seconds_bucket{le="+Inf"}'] == 1
    assert samples['codeblanks_grade_syncs_total{result="pending"}'] == 1
    assert samples["codeblanks_database_up"] == 1
    assert samples["codeblanks_redis_up"] == 0  # the test settings point at a closed port


def test_metrics_with_redis_report_queue_depths(app, client, redis_server):
    swap(app, settings=replace(extensions.settings(app), redis_url=redis_server.url))
    samples = parse(client.get("/metrics", headers=AUTH).text)
    assert samples["codeblanks_redis_up"] == 1
    assert samples['codeblanks_queue_depth{queue="grade"}'] == 0


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
     {"Authorization": "Bearer " + TOKEN[:-1]}, {"Authorization": "Bearer ş" + TOKEN}],
)  # fmt: skip
def test_metrics_refuse_a_caller_without_the_token(app, client, headers):
    place(extensions.store(app))
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert "codeblanks_" not in response.text
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_metrics_are_off_without_a_token(app, client):
    swap(app, settings=replace(extensions.settings(app), metrics_token=""))
    response = client.get("/metrics", headers=AUTH)
    assert response.status_code == 404
    assert "CODEBLANKS_METRICS_TOKEN" in response.text and "codeblanks_" not in response.text
