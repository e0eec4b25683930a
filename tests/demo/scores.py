"""Scores and AGS requests as the tests send them."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import requests

from demo import DemoServer, LineItem

SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/"
ALL_AGS = " ".join(SCOPE + s for s in ("lineitem", "lineitem.readonly", "result.readonly", "score"))
READ_ONLY = f"{SCOPE}lineitem.readonly {SCOPE}result.readonly"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
CANVAS = "https://canvas.instructure.com/lti/submission"


# A fixed instant, so tests about whole seconds do not depend on how fast they run.
EPOCH = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)


def stamp(seconds_from_now: float = 0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds_from_now)).isoformat()


def at(seconds: float) -> str:
    """Return the ISO timestamp `seconds` after 2026-05-01 10:00:00 UTC."""
    return (EPOCH + timedelta(seconds=seconds)).isoformat()


def score(**changes: Any) -> dict[str, Any]:
    body = {
        "userId": "demo-ali",
        "scoreGiven": 7,
        "scoreMaximum": 10,
        "comment": "2 of 3 tests pass",
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded",
        "timestamp": stamp(),
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


def post_score(
    demo: DemoServer,
    item: LineItem,
    body: object,
    auth: dict[str, str],
    content_type: str = SCORE_TYPE,
) -> requests.Response:
    url = demo.platform.lineitem_url(item)
    path, _, query = url.partition("?")
    return requests.post(
        f"{path}/scores" + (f"?{query}" if query else ""),
        data=json.dumps(body),
        headers={**auth, "Content-Type": content_type},
        timeout=5,
    )
