"""Whose page is it: the page's own session wins over the cookie, and sessions end on time."""

import time

import pytest

from tests.factories import add_student, place
from tests.service.sessions import catch_tasks, sign_in

LESSON = "expert/what-is-attention"
HOUR = 3600


def mint(app, **session):
    """Return a signed session as a page carries it (`s`, or the header)."""
    serializer = app.session_interface.get_signing_serializer(app)
    return serializer.dumps({"launched_at": int(time.time()), **session})


@pytest.fixture
def two(app, client):
    """Berna and Ali, each with a placement of their own; the browser holds Berna's cookie."""
    store = app.extensions["store"]
    berna = place(store, lesson_id=LESSON)
    ali = place(store, lesson_id=LESSON)
    sign_in(client, berna.user_id, [berna.placement_id])
    catch_tasks(app)
    return berna, ali


def test_the_pages_token_wins_over_anothers_cookie(app, client, two):
    berna, ali = two
    token = mint(app, user_id=ali.user_id, placement_ids=[ali.placement_id])
    headers = {"X-CodeBlanks-Session": token}
    mine = client.get(f"/lessons/{ali.placement_id}", headers=headers)
    assert mine.status_code == 200
    theirs = client.get(f"/lessons/{berna.placement_id}", headers=headers)
    assert theirs.status_code == 403  # the page is Ali's: Berna's placement is not his
    submitted = client.post(
        f"/api/placements/{ali.placement_id}/submissions", json={"source": "x"}, headers=headers
    )
    assert submitted.status_code == 202
    by_query = client.get(f"/lessons/{berna.placement_id}?s={token}")
    assert by_query.status_code == 403
    # and the cookie still holds Berna's session: a page's token never rewrites it
    assert "Set-Cookie" not in mine.headers
    assert client.get(f"/lessons/{berna.placement_id}").status_code == 200


def test_a_bad_token_is_no_session_even_with_a_cookie(client, two):
    berna, _ = two
    answer = client.get(f"/lessons/{berna.placement_id}", headers={"X-CodeBlanks-Session": "x"})
    assert answer.status_code == 401


def test_use_does_not_keep_a_session_alive_forever(app, client, two):
    berna, _ = two
    lifetime = int(app.permanent_session_lifetime.total_seconds())
    # signed a second ago (as every page re-signs it), launched longer ago than the lifetime
    stale = mint(app, user_id=berna.user_id, placement_ids=[berna.placement_id],
                 launched_at=int(time.time()) - lifetime - 60)  # fmt: skip
    answer = client.get(f"/lessons/{berna.placement_id}", headers={"X-CodeBlanks-Session": stale})
    assert answer.status_code == 401
    no_clock = mint(app, user_id=berna.user_id, placement_ids=[berna.placement_id],
                    launched_at=None)  # fmt: skip
    headers = {"X-CodeBlanks-Session": no_clock}
    answer = client.get(f"/lessons/{berna.placement_id}", headers=headers)
    assert answer.status_code == 401
    fresh = mint(app, user_id=berna.user_id, placement_ids=[berna.placement_id],
                 launched_at=int(time.time()) - lifetime + 60)  # fmt: skip
    answer = client.get(f"/lessons/{berna.placement_id}", headers={"X-CodeBlanks-Session": fresh})
    assert answer.status_code == 200


def test_an_old_cookie_session_ends_too(app, client, two):
    berna, _ = two
    with client.session_transaction() as session:
        session["launched_at"] = int(time.time()) - 9 * HOUR
    assert client.get(f"/lessons/{berna.placement_id}").status_code == 401


def test_the_pages_links_keep_the_launch_time(app, client, two):
    berna, _ = two
    launched = int(time.time()) - 2 * HOUR
    token = mint(app, user_id=berna.user_id, placement_ids=[berna.placement_id],
                 launched_at=launched)  # fmt: skip
    page = client.get(f"/lessons/{berna.placement_id}?s={token}").get_data(as_text=True)
    from tests.service.sessions import session_param

    serializer = app.session_interface.get_signing_serializer(app)
    assert serializer.loads(session_param(page))["launched_at"] == launched


def test_a_student_of_another_platform_cannot_use_a_placement(app, client, two):
    berna, ali = two
    other = add_student(app.extensions["store"], ali, "someone")
    token = mint(app, user_id=other, placement_ids=[])
    answer = client.get(f"/lessons/{ali.placement_id}", headers={"X-CodeBlanks-Session": token})
    assert answer.status_code == 403
