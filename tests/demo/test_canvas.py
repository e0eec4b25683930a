"""The demo LMS playing Canvas answers as canvas-lms's controllers do, over real HTTP.

Each test pins one behaviour that Moodle (the demo's default) answers otherwise; the file of
instructure/canvas-lms it was read from is named in demo/personalities.py and docs/canvas.md.
"""

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from demo import DemoServer, LineItem, Tool
from tests.demo.fake_tool import FakeTool
from tests.demo.scores import ALL_AGS, SCORE_TYPE, post_score, score, stamp

NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
NOT_A_STUDENT = {
    "errors": {
        "type": "unprocessable_entity",
        "message": "User not found in course or is not a student",
    }
}


@pytest.fixture
def canvas(state_dir: Path) -> Iterator[DemoServer]:
    """The demo LMS playing Canvas, with 61 more learners (65 people: two NRPS pages)."""
    with DemoServer(state_dir, personality="canvas", learners=61) as server:
        yield server


@pytest.fixture
def key(canvas: DemoServer, tool: FakeTool) -> Tool:
    return tool.register_with(canvas.platform)


@pytest.fixture
def column(canvas: DemoServer, key: Tool) -> LineItem:
    link = canvas.platform.add_link(key.client_id, "Attention", score_maximum=10)
    return canvas.platform.lineitems_of(link)[0]


@pytest.fixture
def bearer(canvas: DemoServer, tool: FakeTool, key: Tool) -> dict[str, str]:
    return {"Authorization": f"Bearer {tool.access_token(canvas.platform, ALL_AGS)}"}


def test_one_issuer_for_every_school_and_the_schools_domain_for_every_endpoint(
    canvas: DemoServer, key: Tool
) -> None:
    config = requests.get(canvas.platform.openid_config_url, timeout=5).json()
    assert config["issuer"] == "https://canvas.instructure.com"
    base = canvas.config.base_url
    assert config["authorization_endpoint"] == base + "/api/lti/authorize_redirect"
    assert config["token_endpoint"] == base + "/login/oauth2/token"
    assert config["jwks_uri"] == base + "/api/lti/security/jwks"
    assert config["registration_endpoint"] == base + "/api/lti/registrations"
    assert canvas.platform.lineitems_url("demo-course-1") == (
        base + "/api/lti/courses/demo-course-1/line_items"
    )
    assert requests.get(config["jwks_uri"], timeout=5).json()["keys"]
    # a developer key's global id and "<tool id>:<40 hex context id>"
    assert re.fullmatch(r"1\d{13}", key.client_id)
    assert re.fullmatch(r"\d+:[0-9a-f]{40}", key.deployment_id)


def test_authorize_redirect_sends_the_browser_to_the_schools_authorize(canvas: DemoServer) -> None:
    answer = requests.get(
        canvas.platform.auth_url, params={"state": "s1", "nonce": "n1"}, allow_redirects=False,
        timeout=5,
    )  # fmt: skip
    assert answer.status_code == 302
    assert answer.headers["Location"] == (
        canvas.config.base_url + "/api/lti/authorize?state=s1&nonce=n1"
    )


def test_login_initiation_carries_canvas_parameters_and_the_launch_its_claims(
    canvas: DemoServer, tool: FakeTool, key: Tool
) -> None:
    link = canvas.platform.add_link(key.client_id, "Attention", score_maximum=10)
    login = canvas.platform.launch("ali", link.id)
    assert login.params["iss"] == "https://canvas.instructure.com"
    assert login.params["deployment_id"] == key.deployment_id
    assert "lti_deployment_id" not in login.params
    assert login.params["canvas_environment"] == "prod"
    auth = tool.auth_params(login.params)
    claims = canvas.platform.authorize(auth).claims
    assert claims["iss"] == "https://canvas.instructure.com"
    assert claims["azp"] == key.client_id
    assert claims["exp"] - claims["iat"] == 3600
    assert "https://purl.imsglobal.org/spec/lti/claim/lti11_legacy_user_id" in claims
    ags = claims["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"]
    assert ags["lineitems"].startswith(canvas.config.base_url + "/api/lti/courses/")


def test_token_scopes_are_all_or_nothing(canvas: DemoServer, tool: FakeTool, key: Tool) -> None:
    url = canvas.platform.token_url
    unknown = "https://example.com/scope/other"
    refused = tool.token_request(
        url, f"{SCORE_SCOPE} {unknown}", tool.sign(tool.assertion_claims(url))
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_scope"
    assert refused.json()["error_description"].endswith(
        "The following scopes were requested, but not granted: " + unknown
    )
    empty = tool.token_request(url, "", tool.sign(tool.assertion_claims(url)))
    assert empty.status_code == 400 and empty.json()["error"] == "invalid_scope"
    bad_aud = tool.token_request(url, SCORE_SCOPE, tool.sign(tool.assertion_claims("x")))
    assert bad_aud.status_code == 400  # not Moodle's 401 invalid_client
    assert bad_aud.json() == {
        "error": "invalid_request", "error_description": "the 'aud' is invalid"
    }  # fmt: skip
    granted = tool.token_request(url, SCORE_SCOPE, tool.sign(tool.assertion_claims(url)))
    assert granted.status_code == 200 and granted.json()["expires_in"] == 3600


def test_service_refusals_have_canvas_shapes(
    canvas: DemoServer, tool: FakeTool, column: LineItem
) -> None:
    url = canvas.platform.lineitem_url(column)
    missing = requests.get(url, timeout=5)
    assert missing.status_code == 401
    assert missing.json() == {"errors": {"type": "unauthorized", "message": "Missing access token"}}
    nrps_only = {"Authorization": f"Bearer {tool.access_token(canvas.platform, NRPS)}"}
    scope = requests.get(url, headers=nrps_only, timeout=5)
    assert scope.status_code == 401  # Moodle: 403
    assert scope.json()["errors"]["message"] == "Insufficient permissions"
    gone = requests.get(url.rsplit("/", 1)[0] + "/999", headers=nrps_only, timeout=5)
    assert gone.status_code == 401  # the scope check comes first
    score_token = {"Authorization": f"Bearer {tool.access_token(canvas.platform, ALL_AGS)}"}
    gone = requests.get(url.rsplit("/", 1)[0] + "/999", headers=score_token, timeout=5)
    assert gone.status_code == 404
    assert gone.json() == {"errors": [{"message": "The specified resource does not exist."}]}


def test_a_score_is_200_under_the_score_type_with_the_result_url(
    canvas: DemoServer, column: LineItem, bearer: dict[str, str]
) -> None:
    answer = post_score(canvas, column, score(), bearer)
    assert answer.status_code == 200  # not 201, nor Moodle's plain JSON
    assert answer.headers["Content-Type"] == SCORE_TYPE
    body = answer.json()
    assert body["resultUrl"] == canvas.platform.lineitem_url(column) + "/results/demo-ali"
    assert body["https://canvas.instructure.com/lti/submission"] == {"content_items": []}
    assert answer.headers["X-Rate-Limit-Remaining"] == "600.0"


def test_scores_of_teachers_and_in_unpublished_courses_are_422(
    canvas: DemoServer, column: LineItem, bearer: dict[str, str]
) -> None:
    teacher = post_score(canvas, column, score(userId="demo-ada"), bearer)
    assert (teacher.status_code, teacher.json()) == (422, NOT_A_STUDENT)
    # the user check runs before the required parameters: no userId is the same 422
    nobody = post_score(canvas, column, score(userId=None), bearer)
    assert (nobody.status_code, nobody.json()) == (422, NOT_A_STUDENT)
    canvas.platform.publish(False)
    student = post_score(canvas, column, score(), bearer)
    assert (student.status_code, student.json()) == (422, NOT_A_STUDENT)
    canvas.platform.publish(True)
    assert post_score(canvas, column, score(), bearer).status_code == 200


def test_a_score_for_an_unpublished_assignment_is_an_array_bodied_422(
    canvas: DemoServer, column: LineItem, bearer: dict[str, str]
) -> None:
    canvas.platform.publish(False, column.id)
    answer = post_score(canvas, column, score(), bearer)
    assert answer.status_code == 422
    assert answer.json() == {
        "errors": [
            {
                "field": "grade",
                "message": "cannot be changed at this time: This assignment is still unpublished",
                "error_code": None,
            }
        ]
    }
    assert canvas.platform.scores(column.id) == []  # one transaction: nothing kept


def test_score_validations_as_the_scores_controller_orders_them(
    canvas: DemoServer, column: LineItem, bearer: dict[str, str]
) -> None:
    no_stamp = post_score(canvas, column, score(timestamp=None), bearer)
    assert no_stamp.status_code == 400
    assert no_stamp.json() == {"errors": [{"message": "timestamp is missing"}]}
    bad = post_score(canvas, column, score(timestamp="yesterday"), bearer)
    assert bad.status_code == 400
    assert (
        bad.json()["errors"]["message"] == "Provided timestamp of yesterday not a valid timestamp"
    )
    negative = post_score(canvas, column, score(scoreGiven=-1), bearer)
    assert negative.status_code == 422
    assert negative.json()["errors"]["message"] == "ScoreGiven must be greater than or equal to 0"
    no_max = post_score(canvas, column, score(scoreMaximum=None), bearer)
    assert no_max.status_code == 422
    # progress values are not checked, and extra credit is taken
    odd = post_score(canvas, column, score(activityProgress="Whatever", scoreGiven=12), bearer)
    assert odd.status_code == 200


def test_an_equal_timestamp_is_taken_and_an_earlier_one_is_400(
    canvas: DemoServer, column: LineItem, bearer: dict[str, str]
) -> None:
    when = "2026-05-01T10:00:00.250000+00:00"
    assert post_score(canvas, column, score(timestamp=when), bearer).status_code == 200
    same = post_score(canvas, column, score(timestamp=when, scoreGiven=8), bearer)
    assert same.status_code == 200  # Moodle: 409 (not a later whole second)
    earlier = post_score(canvas, column, score(timestamp="2026-05-01T10:00:00+00:00"), bearer)
    assert earlier.status_code == 400
    assert earlier.json()["errors"]["message"] == (
        "Provided timestamp of 2026-05-01T10:00:00+00:00 before last updated timestamp of "
        "2026-05-01T10:00:00.250+00:00"
    )


def test_line_items_are_paged_ten_at_a_time_with_canvas_links(
    canvas: DemoServer, key: Tool, bearer: dict[str, str]
) -> None:
    for n in range(12):
        canvas.platform.add_link(key.client_id, f"Lesson {n}", score_maximum=10)
    url = canvas.platform.lineitems_url("demo-course-1")
    first = requests.get(url, headers=bearer, timeout=5)
    assert first.status_code == 200 and len(first.json()) == 10
    assert first.headers["Link"] == (
        f'<{url}?page=1&per_page=10>; rel="current",<{url}?page=2&per_page=10>; rel="next",'
        f'<{url}?page=1&per_page=10>; rel="first",<{url}?page=2&per_page=10>; rel="last"'
    )
    second = requests.get(url, params={"page": 2, "per_page": 10}, headers=bearer, timeout=5)
    assert len(second.json()) == 2 and 'rel="next"' not in second.headers["Link"]
    assert "startDateTime" not in first.json()[0]


def test_names_and_roles_come_fifty_a_page(canvas: DemoServer, tool: FakeTool, key: Tool) -> None:
    token = {"Authorization": f"Bearer {tool.access_token(canvas.platform, NRPS)}"}
    url = canvas.platform.memberships_url("demo-course-1")
    first = requests.get(url, params={"limit": 100}, headers=token, timeout=5)
    assert first.status_code == 200
    assert len(first.json()["members"]) == 50  # the limit is capped at 50
    links = dict(
        (rel, target)
        for target, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', first.headers["Link"])
    )
    assert list(links) == ["current", "next", "first", "last"]
    assert links["next"] == f"{url}?page=2&per_page=50"
    second = requests.get(links["next"], headers=token, timeout=5).json()["members"]
    assert len(second) == 15
    everyone = {m["user_id"] for m in first.json()["members"]} | {m["user_id"] for m in second}
    assert len(everyone) == 65
    assert all("lti11_legacy_user_id" in m for m in second)


def test_the_throttle_is_a_403_in_plain_text_per_client_id(
    canvas: DemoServer, tool: FakeTool, column: LineItem, bearer: dict[str, str]
) -> None:
    canvas.platform.throttle(1, client_id="someone-else")
    assert post_score(canvas, column, score(), bearer).status_code == 200
    canvas.platform.throttle(2, client_id=column.client_id)
    answer = post_score(canvas, column, score(), bearer)
    assert answer.status_code == 403
    assert answer.text == "403 Forbidden (Rate Limit Exceeded)\n"
    assert answer.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert answer.headers["X-Rate-Limit-Remaining"] == "0.0"
    assert "Retry-After" not in answer.headers and "X-Request-Cost" not in answer.headers
    url = canvas.platform.token_url
    token = tool.token_request(url, SCORE_SCOPE, tool.sign(tool.assertion_claims(url)))
    assert token.status_code == 403  # the same bucket: the token endpoint too
    assert post_score(canvas, column, score(timestamp=stamp(1)), bearer).status_code == 200


def test_dynamic_registration_answers_no_deployment_id(
    canvas: DemoServer, tool: FakeTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool.auth_url = canvas.platform.auth_url
    known = f"{SCORE_SCOPE} {NRPS}"  # Canvas refuses unknown scopes (the fake tool sends one)
    asked = FakeTool.registration_request
    monkeypatch.setattr(tool, "registration_request", lambda **o: asked(tool, scope=known, **o))
    opened = requests.get(canvas.platform.start_registration(tool.register_url), timeout=10)
    assert opened.status_code == 200
    answer = tool.registrations[-1]
    assert answer.status_code == 200, answer.text
    conf = answer.json()["https://purl.imsglobal.org/spec/lti-tool-configuration"]
    assert "deployment_id" not in conf
    assert conf["https://canvas.instructure.com/lti/registration_config_url"].startswith(
        canvas.config.base_url
    )
    made = canvas.platform.tool(answer.json()["client_id"])
    assert re.fullmatch(r"\d+:[0-9a-f]{40}", made.deployment_id)


def test_a_developer_key_is_made_from_the_tools_json(canvas: DemoServer, tool: FakeTool) -> None:
    config = {
        "title": "Fake tool",
        "description": "For tests",
        "target_link_uri": tool.launch_url,
        "oidc_initiation_url": tool.login_url,
        "public_jwk_url": tool.jwks_url,
        "scopes": [SCORE_SCOPE],
        "extensions": [
            {
                "platform": "canvas.instructure.com",
                "settings": {"placements": [{"placement": "link_selection",
                                             "message_type": "LtiDeepLinkingRequest"}]},
            }
        ],
    }  # fmt: skip
    admin = canvas.config.url("/admin/developer_keys")
    made = requests.post(admin, json={"json": config}, timeout=5)
    assert made.status_code == 201, made.text
    key = canvas.platform.tool(made.json()["client_id"])
    assert key.scopes == (SCORE_SCOPE,) and key.deep_link_url == tool.launch_url
    refused = requests.post(
        admin, json={"json": {**config, "title": None, "platform": "x"}}, timeout=5
    )
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["message"] == (
        "The property '#/' did not contain a required property of 'title'"
    )
    wrong = {**config, "extensions": [{"platform": "moodle", "settings": {"placements": []}}]}
    assert requests.post(admin, json={"json": wrong}, timeout=5).status_code == 422


def test_the_course_page_takes_a_developer_key_by_json_url(
    canvas: DemoServer, tool: FakeTool
) -> None:
    config = {
        "title": "Pasted tool",
        "description": "For tests",
        "target_link_uri": tool.launch_url,
        "oidc_initiation_url": tool.login_url,
        "public_jwk": tool.jwk,
        "scopes": [SCORE_SCOPE],
    }
    page = requests.get(canvas.config.url("/"), timeout=5)
    assert "Developer keys (Canvas)" in page.text
    made = requests.post(
        canvas.config.url("/developer_keys"),
        data={"json": json.dumps(config), "redirect_uris": tool.launch_url},
        timeout=5,
    )
    assert made.status_code == 200 and "Pasted tool" in made.text
    [key] = canvas.platform.tools()
    assert key.jwks == {"keys": [tool.jwk]} and key.redirect_uris == (tool.launch_url,)


def test_pending_manual_keeps_the_points_and_pending_clears_them(
    canvas: DemoServer, column: LineItem, bearer: dict[str, str]
) -> None:
    results = canvas.platform.lineitem_url(column) + "/results"
    manual = score(gradingProgress="PendingManual", scoreGiven=5, timestamp=stamp())
    assert post_score(canvas, column, manual, bearer).status_code == 200
    [kept] = requests.get(results, headers=bearer, timeout=5).json()
    assert kept["resultScore"] == 5  # Moodle: blank (FullyGraded only)
    pending = score(gradingProgress="Pending", scoreGiven=None, timestamp=stamp(1))
    assert post_score(canvas, column, pending, bearer).status_code == 200
    [cleared] = requests.get(results, headers=bearer, timeout=5).json()
    assert "resultScore" not in cleared
    teacher = requests.get(results, params={"user_id": "demo-ada"}, headers=bearer, timeout=5)
    assert teacher.status_code == 200 and teacher.json() == []  # not a student: an empty list


def test_with_platform_storage_the_login_and_the_launch_name_canvas_s_frame(
    state_dir: Path, tool: FakeTool
) -> None:
    target = "post_message_forwarding"  # lib/lti/platform_storage.rb FORWARDING_TARGET
    with DemoServer(state_dir, personality="canvas", storage_target=target) as server:
        key = tool.register_with(server.platform)
        link = server.platform.add_link(key.client_id, "Attention", score_maximum=10)
        login = server.platform.launch("ali", link.id)
        assert login.params["lti_storage_target"] == target
        launch = server.platform.authorize(tool.auth_params(login.params))
        assert launch.fields["lti_storage_target"] == target
        platform_claim = launch.claims["https://purl.imsglobal.org/spec/lti/claim/tool_platform"]
        assert platform_claim["product_family_code"] == "canvas"
        assert platform_claim["version"] == "cloud"


def test_registration_is_checked_as_canvas_s_model_checks_it(
    canvas: DemoServer, tool: FakeTool
) -> None:
    config = "https://purl.imsglobal.org/spec/lti-tool-configuration"
    request = tool.registration_request(scope=f"{SCORE_SCOPE} https://example.com/scope/x")
    token = canvas.platform.start_registration(tool.register_url).rsplit("=", 1)[1]
    answer = requests.post(
        canvas.platform.registration_url,
        json=request,
        headers={"Authorization": f"Bearer {token}"},
        timeout=5,
    )
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["message"] == "Invalid scopes: https://example.com/scope/x"
    no_claims = tool.registration_request()
    del no_claims[config]["claims"]
    refused = requests.post(
        canvas.platform.registration_url,
        json=no_claims,
        headers={"Authorization": f"Bearer {token}"},
        timeout=5,
    )
    assert refused.status_code == 422 and "claims is required" in refused.text


def test_a_scope_the_admin_unticked_fails_every_token_asking_for_it(
    canvas: DemoServer, tool: FakeTool, key: Tool
) -> None:
    canvas.platform.untick(
        key.client_id, "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
    )
    url = canvas.platform.token_url
    refused = tool.token_request(url, ALL_AGS, tool.sign(tool.assertion_claims(url)))
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_scope"
    assert refused.json()["error_description"].endswith("scope/result.readonly")
    alone = tool.token_request(url, SCORE_SCOPE, tool.sign(tool.assertion_claims(url)))
    assert alone.status_code == 200  # asked alone, the score scope is still granted


def test_publishing_and_the_throttle_are_set_over_the_admin_api(
    canvas: DemoServer, column: LineItem, bearer: dict[str, str]
) -> None:
    publish = canvas.config.url("/admin/publish")
    answer = requests.post(publish, json={"published": False, "lineitem_id": column.id}, timeout=5)
    assert answer.status_code == 200
    assert post_score(canvas, column, score(), bearer).status_code == 422
    requests.post(publish, json={"published": True, "lineitem_id": column.id}, timeout=5)
    assert post_score(canvas, column, score(), bearer).status_code == 200
    assert requests.post(publish, json={"published": "no"}, timeout=5).status_code == 400
    knobs = canvas.config.url("/admin/knobs")
    throttle = {"throttle": 1, "client_id": column.client_id}
    assert requests.post(knobs, json=throttle, timeout=5).status_code == 200
    assert post_score(canvas, column, score(timestamp=stamp(1)), bearer).status_code == 403
    assert post_score(canvas, column, score(timestamp=stamp(1)), bearer).status_code == 200
