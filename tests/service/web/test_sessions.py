"""Whose page is it: the page's own session, a link that is not an account, sessions that end."""

import time

import pytest
from sqlalchemy import select, update

from service.store.models import Membership, Placement, Submission, User
from service.web import extensions
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.service import sessions
from tests.service.sessions import (
    form_token,
    page_session,
    session_param,
    signed_ago,
    text_of,
)

LESSON = "expert/what-is-attention"
celery_app = sessions.celery_app  # every send recorded, none made
HOUR = 3600
MINUTE = 60
FROM_THE_TOOL = {"Sec-Fetch-Site": "same-origin"}  # a navigation from one of the tool's pages
PASTED = {"Sec-Fetch-Site": "none"}  # an address typed or pasted, a bookmark


def mint(app, **session):
    """Return a signed session as a page's script carries it (the header)."""
    serializer = app.session_interface.get_signing_serializer(app)
    return serializer.dumps({"launched_at": int(time.time()), **session})


@pytest.fixture
def two(app, client):
    """Berna and Ali, each with a placement of their own; the browser holds Berna's cookie."""
    store = extensions.store(app)
    berna = place(store, lesson_id=LESSON)
    ali = place(store, lesson_id=LESSON)
    with store.session() as session:
        for placed, name in ((berna, "Berna Student"), (ali, "Ali Student")):
            session.execute(update(User).where(User.id == placed.user_id).values(name=name))
    sign_in(client, berna.user_id, [berna.placement_id])
    return berna, ali


def alis_link(app, ali, ago=0.0):
    """Return the link token of a lesson page Ali was shown `ago` seconds ago (his own client)."""
    with app.test_client() as his, signed_ago(ago):
        sign_in(his, ali.user_id, [ali.placement_id])
        return session_param(his.get(f"/lessons/{ali.placement_id}").get_data(as_text=True))


def submissions_of(app, user_id):
    with extensions.store(app).session() as session:
        return session.scalars(select(Submission.id).where(Submission.user_id == user_id)).all()


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
    # a link followed from one of Ali's pages in this browser (two tabs) stays his too
    link = alis_link(app, ali)
    by_link = client.get(f"/lessons/{berna.placement_id}?s={link}", headers=FROM_THE_TOOL)
    assert by_link.status_code == 403
    own = client.get(f"/lessons/{ali.placement_id}?s={link}", headers=FROM_THE_TOOL)
    assert own.status_code == 200 and "Signed in as Ali Student" in text_of(own.text)
    # and the cookie still holds Berna's session: a page's token never rewrites it
    assert "Set-Cookie" not in mine.headers and "Set-Cookie" not in own.headers
    hers = client.get(f"/lessons/{berna.placement_id}")
    assert "Signed in as Berna Student" in text_of(hers.text)


def test_a_bad_token_is_no_session_even_with_a_cookie(client, two):
    berna, _ = two
    answer = client.get(f"/lessons/{berna.placement_id}", headers={"X-CodeBlanks-Session": "x"})
    assert answer.status_code == 401


def test_the_long_session_token_never_works_in_a_url(app, two):
    _, ali = two
    with app.test_client() as his:
        sign_in(his, ali.user_id, [ali.placement_id])
        page = his.get(f"/lessons/{ali.placement_id}").get_data(as_text=True)
    header = page_session(page)
    with app.test_client() as stranger:  # no cookie of its own
        assert stranger.get(f"/lessons/{ali.placement_id}?s={header}").status_code == 401
        headers = {"X-CodeBlanks-Session": header}
        assert stranger.get(f"/lessons/{ali.placement_id}", headers=headers).status_code == 200


def test_a_link_of_a_page_left_idle_dies_while_its_script_keeps_working(app, two):
    _, ali = two
    with app.test_client() as his, signed_ago(16 * MINUTE):  # the page Ali left open
        sign_in(his, ali.user_id, [ali.placement_id])
        page = his.get(f"/lessons/{ali.placement_id}").get_data(as_text=True)
    link, header = session_param(page), page_session(page)
    with app.test_client() as stranger:  # a copied link, opened elsewhere
        answer = stranger.get(f"/lessons/{ali.placement_id}?s={link}")
        assert answer.status_code == 401 and "Ali Student" not in answer.text
        posted = stranger.post(
            f"/lessons/{ali.placement_id}/submissions?s={link}",
            data={"csrf": form_token(page), "source": "print(1)"},
        )
        assert posted.status_code == 401
    assert submissions_of(app, ali.user_id) == []
    # the page's script, typing for a while: its header still works, and signs fresh links
    with app.test_client() as script:
        headers = {"X-CodeBlanks-Session": header}
        saved = script.put(
            f"/api/placements/{ali.placement_id}/draft", json={"source": "x"}, headers=headers
        )
        assert saved.status_code == 204
        fresh = script.post("/api/session/link", headers=headers)
        assert fresh.status_code == 200 and fresh.get_json()["lifetime_s"] == 15 * MINUTE
        again = script.get(f"/lessons/{ali.placement_id}?s={fresh.get_json()['token']}")
        assert again.status_code == 200
        # the link's signature needs the header: a link alone signs no further links
        assert script.post(f"/api/session/link?s={link}", json={}).status_code == 401


def test_a_link_lives_its_lifetime_then_no_longer(app, two):
    _, ali = two
    for ago, status in ((14 * MINUTE, 200), (16 * MINUTE, 401)):
        link = alis_link(app, ali, ago)
        with app.test_client() as stranger:
            assert stranger.get(f"/lessons/{ali.placement_id}?s={link}").status_code == status
    # the header, signed two hours ago on a launch of two hours ago, is still good
    launched = int(time.time()) - 2 * HOUR
    with signed_ago(2 * HOUR):
        header = mint(app, user_id=ali.user_id, placement_ids=[ali.placement_id],
                      launched_at=launched)  # fmt: skip
    with app.test_client() as script:
        headers = {"X-CodeBlanks-Session": header}
        assert script.get(f"/lessons/{ali.placement_id}", headers=headers).status_code == 200


def test_another_users_link_opened_elsewhere_asks_before_anything_is_done(app, client, two):
    berna, ali = two
    link = alis_link(app, ali)
    asked = client.get(f"/lessons/{ali.placement_id}?s={link}", headers=PASTED)
    assert asked.status_code == 409
    words = text_of(asked.text, spaced=True)
    assert "carries the session of Ali Student" in words
    assert "This browser is signed in as Berna Student" in words
    assert "Continue as Berna Student" in words and "Switch to Ali Student" in words
    assert "What is attention?" not in words  # not Ali's page
    assert f'href="/lessons/{ali.placement_id}"' in asked.text  # on as Berna: no token
    # a form sent from elsewhere with Ali's link does nothing either
    posted = client.post(
        f"/api/placements/{ali.placement_id}/submissions?s={link}",
        json={"source": "print(1)"}, headers=PASTED,
    )  # fmt: skip
    assert posted.status_code == 409 and posted.get_json()["error"] == "another_users_link"
    assert submissions_of(app, ali.user_id) == []
    # a browser that has no session of its own is whoever the fresh link says, and shows it
    with app.test_client() as fresh:
        own = fresh.get(f"/lessons/{ali.placement_id}?s={link}", headers=PASTED)
        assert own.status_code == 200 and "Signed in as Ali Student" in text_of(own.text)
    # the visible switch: now this browser is Ali's, and says so
    switched = client.post(
        "/session/switch",
        data={"csrf": form_token(asked.text), "link": link, "next": f"/lessons/{ali.placement_id}"},
    )
    assert switched.status_code == 303 and switched.headers["Location"] == (
        f"/lessons/{ali.placement_id}"
    )
    page = client.get(switched.headers["Location"])
    assert page.status_code == 200 and "Signed in as Ali Student" in text_of(page.text)


@pytest.mark.parametrize("fault", ["no-csrf", "elsewhere", "stale-link", "no-link"])
def test_the_switch_takes_only_this_pages_choice(app, client, two, fault):
    berna, ali = two
    link = alis_link(app, ali, 16 * MINUTE if fault == "stale-link" else 0)
    asked = client.get(f"/lessons/{ali.placement_id}?s={alis_link(app, ali)}", headers=PASTED)
    form = {"csrf": form_token(asked.text), "link": link, "next": f"/lessons/{ali.placement_id}"}
    if fault == "no-csrf":
        form.pop("csrf")
    elif fault == "elsewhere":
        form["next"] = "//evil.example/x"
    elif fault == "no-link":
        form["link"] = "x" * 20000
    assert client.post("/session/switch", data=form).status_code == 400
    # the browser is still Berna's
    page = client.get(f"/lessons/{berna.placement_id}")
    assert page.status_code == 200 and "Signed in as Berna Student" in text_of(page.text)


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
    headers = {"X-CodeBlanks-Session": token}
    page = client.get(f"/lessons/{berna.placement_id}", headers=headers).get_data(as_text=True)
    serializer = app.session_interface.get_signing_serializer(app)
    assert serializer.loads(page_session(page))["launched_at"] == launched
    # and a page opened by its link: links are signed afresh, the session's clock is not
    with app.test_client() as other_tab:
        followed = other_tab.get(f"/lessons/{berna.placement_id}?s={session_param(page)}")
    assert serializer.loads(page_session(followed.text))["launched_at"] == launched


def test_a_student_of_another_platform_cannot_use_a_placement(app, client, two):
    berna, ali = two
    other = add_student(extensions.store(app), ali, "someone")
    token = mint(app, user_id=other, placement_ids=[])
    answer = client.get(f"/lessons/{ali.placement_id}", headers={"X-CodeBlanks-Session": token})
    assert answer.status_code == 403


@pytest.mark.parametrize(
    ("language", "words", "unnamed"),
    [("en", 'Signed in as <strong translate="no">{}</strong>', "LMS user student-1"),
     ("tr", 'Oturum açan: <strong translate="no">{}</strong>', "LMS kullanıcısı student-1")],
)  # fmt: skip
def test_every_student_and_teacher_page_says_whose_session_it_is(app, client, two, language,
                                                                 words, unnamed):  # fmt: skip
    berna, ali = two
    store = extensions.store(app)
    with store.session() as session:
        course_id = session.get(Placement, berna.placement_id).course_id
        session.add(Membership(course_id=course_id, user_id=berna.user_id, teacher=False))
        # Ali sent no name: the page names him honestly, by his LMS's id for him
        session.execute(update(User).where(User.id == ali.user_id).values(name="", email=""))
    ids = {"placement_id": berna.placement_id, "course_id": course_id, "user_id": berna.user_id}
    shown = {}
    for who, user_id, teaches in (("Berna Student", berna.user_id, []),
                                  (unnamed, ali.user_id, [course_id])):  # fmt: skip
        sign_in(client, user_id, [berna.placement_id], teaches=teaches)
        with client.session_transaction() as session:
            session["locale"] = language
        for rule in app.url_map.iter_rules():
            if rule.endpoint.split(".")[0] not in ("pages", "teacher", "regrades"):
                continue
            if "GET" not in rule.methods or not set(rule.arguments) <= set(ids):
                continue
            answer = client.get(rule.build({k: ids[k] for k in rule.arguments})[1])
            if answer.mimetype != "text/html":
                continue  # the pages' JSON and CSV
            assert answer.status_code in (200, 403), (rule.endpoint, answer.status_code)
            assert words.format(who) in answer.text, (who, rule.endpoint)
            shown.setdefault(who, set()).add(rule.endpoint)
    assert shown["Berna Student"] >= {"pages.lesson", "pages.course"}
    assert shown[unnamed] >= {
        "teacher.gradebook", "teacher.placement", "teacher.student", "regrades.show",
        "pages.course",
    }  # fmt: skip
