import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from flask import Flask

from demo import (
    DemoConfig,
    DemoServer,
    Tool,
    create_demo_blueprint,
    parse_form,
    platform_of,
)
from tests.demo.fake_tool import FakeTool


def test_course_page_offers_launches_deep_linking_and_registration(
    demo: DemoServer, registered: Tool
) -> None:
    link = demo.platform.add_link(registered.client_id, "What is attention?", score_maximum=10)
    page = demo.app.test_client().get("/demo/").get_data(as_text=True)
    assert "Demo course" in page and "What is attention?" in page and "out of 10" in page
    for name in ("Ada Teacher", "Ali Student", "Berna Student", "Can Student"):
        assert f"Launch as {name}" in page
    assert f"/demo/launch/{link.id}?user=demo-berna" in page
    assert "Add content (deep linking) as Ada Teacher" in page
    assert f"/demo/deep_link?client_id={registered.client_id}" in page
    assert "Register by LTI Dynamic Registration" in page
    assert "<script" not in page and "http://" not in page.split("<main>")[0]  # no external assets


LOGIN_FIELDS = {
    "iss",
    "login_hint",
    "target_link_uri",
    "lti_message_hint",
    "client_id",
    "lti_deployment_id",
}


def test_launch_page_frames_a_login_initiation_posted_like_moodle(
    demo: DemoServer, registered: Tool, tool: FakeTool
) -> None:
    link = demo.platform.add_link(registered.client_id, "Lesson")
    client = demo.app.test_client()
    frame = client.get(f"/demo/launch/{link.id}?user=demo-ali").get_data(as_text=True)
    assert "Launched as Ali Student" in frame
    src = re.search(r'<iframe class="tool" name="lti-tool" src="([^"]+)"', frame)
    assert src and src.group(1) == f"/demo/launch/{link.id}/start?user=demo-ali&amp;lang=en"
    assert "lti.get_data" in frame and "org.imsglobal.lti.close" in frame
    start = client.get(src.group(1).replace("&amp;", "&"))
    assert start.status_code == 200 and start.mimetype == "text/html"
    page = start.get_data(as_text=True)
    assert f"<form id='autopost' method='post' action='{tool.login_url}'>" in page
    form = parse_form(page)
    assert set(form.fields) == LOGIN_FIELDS and form.fields["login_hint"] == "demo-ali"
    # without scripts a button submits it; with them, one line does
    assert "<noscript><button type='submit'>Continue</button></noscript>" in page
    assert page.count("<script>") == 1 and "document.getElementById('autopost').submit()" in page


def test_deep_linking_start_is_posted_too(demo: DemoServer, tool: FakeTool) -> None:
    registered = tool.register_with(demo.platform)
    frame_src = f"/demo/deep_link/start?client_id={registered.client_id}&user=demo-ada"
    form = parse_form(demo.app.test_client().get(frame_src).get_data(as_text=True))
    assert form.action == tool.login_url and set(form.fields) == LOGIN_FIELDS


def test_a_get_login_initiation_is_a_redirect_when_asked(state_dir: Path, tool: FakeTool) -> None:
    with DemoServer(state_dir, login_method="GET") as demo:
        registered = tool.register_with(demo.platform)
        link = demo.platform.add_link(registered.client_id, "Lesson")
        start = demo.app.test_client().get(f"/demo/launch/{link.id}/start?user=demo-ali")
        assert start.status_code == 302
        assert start.location.startswith(tool.login_url + "?")
        assert parse_qs(urlsplit(start.location).query)["login_hint"] == ["demo-ali"]


def test_gradebook_shows_latest_scores_and_every_score_received(
    demo: DemoServer, registered: Tool
) -> None:
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
    [item] = demo.platform.lineitems_of(link)
    base = {"activityProgress": "Completed", "gradingProgress": "FullyGraded", "scoreMaximum": 4}
    demo.platform.records.add_score(
        item.id, "demo-ali", {**base, "scoreGiven": 3, "timestamp": "2026-05-01T10:00:00+00:00"}
    )
    demo.platform.records.add_score(
        item.id, "demo-ali", {**base, "scoreGiven": 1, "timestamp": "2026-05-01T09:00:00+00:00"}
    )
    page = demo.app.test_client().get("/demo/gradebook").get_data(as_text=True)
    assert "<strong>7.5</strong>" in page  # 3 of 4, on the column's 10 points
    assert "2026-05-01T10:00:00+00:00" in page
    refusal = f"Refusing score with an earlier timestamp for item {item.id} and user demo-ali"
    assert f"refused (409): {refusal}" in page
    assert page.count("no score") == 3  # Berna, Can and the teacher


def test_gradebook_shows_a_scores_comment_as_moodle_shows_feedback(
    demo: DemoServer, registered: Tool
) -> None:
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=8)
    [item] = demo.platform.lineitems_of(link)
    base = {"activityProgress": "Completed", "gradingProgress": "FullyGraded", "scoreMaximum": 8}
    said = {**base, "scoreGiven": 6.5, "comment": "Good <reasoning>; one slip."}
    demo.platform.records.add_score(
        item.id, "demo-ali", {**said, "timestamp": "2026-05-01T10:00:00+00:00"}
    )
    page = demo.app.test_client().get("/demo/gradebook").get_data(as_text=True)
    feedback = re.findall(r'<div class="feedback">(.*?)</div>', page)
    assert feedback == ['<span class="muted">Feedback:</span> Good &lt;reasoning&gt;; one slip.']
    # a later score without a comment leaves the cell without one
    demo.platform.records.add_score(
        item.id, "demo-ali", {**base, "scoreGiven": 8, "timestamp": "2026-05-01T10:00:01+00:00"}
    )
    page = demo.app.test_client().get("/demo/gradebook").get_data(as_text=True)
    assert 'class="feedback"' not in page


def test_registration_form_frames_the_tool_with_a_token(demo: DemoServer, tool: FakeTool) -> None:
    page = demo.app.test_client().post(
        "/demo/tools/register", data={"register_url": tool.register_url}
    )
    src = re.search(r'src="([^"]+)"', page.get_data(as_text=True))
    assert src and src.group(1).startswith(tool.register_url + "?")
    assert "registration_token=" in src.group(1)


def test_pending_tool_is_activated_from_the_course_page(demo: DemoServer, tool: FakeTool) -> None:
    registered = tool.register_with(demo.platform, active=False)
    client = demo.app.test_client()
    assert "waiting for activation" in client.get("/demo/").get_data(as_text=True)
    answer = client.post(f"/demo/tools/{registered.client_id}/activate")
    assert answer.status_code == 302
    assert demo.platform.tool(registered.client_id).active


def test_refusals_render_a_readable_page(demo: DemoServer, registered: Tool) -> None:
    answer = demo.app.test_client().get("/demo/launch/rl-gone/start?user=demo-ali")
    assert answer.status_code == 404
    assert "no resource link &#39;rl-gone&#39;" in answer.get_data(as_text=True)


def test_blueprint_mounts_beside_another_app(tmp_path: Path) -> None:
    host = Flask("host")
    host.add_url_rule("/", "home", lambda: "the tool")
    config = DemoConfig(base_url="http://127.0.0.1:5000/demo", state_dir=tmp_path)
    host.register_blueprint(create_demo_blueprint(config))
    client = host.test_client()
    assert client.get("/").get_data(as_text=True) == "the tool"
    assert client.get("/demo/.well-known/openid-configuration").json["issuer"] == config.issuer
    assert platform_of(host).issuer == "http://127.0.0.1:5000/demo"


def test_the_users_language_goes_with_every_launch_from_the_course_page(
    demo: DemoServer, registered: Tool
) -> None:
    link = demo.platform.add_link(registered.client_id, "Lesson")
    client = demo.app.test_client()
    course = client.get("/demo/?lang=tr").get_data(as_text=True)
    assert f"/demo/launch/{link.id}?user=demo-ali&amp;lang=tr" in course
    assert "<strong>Türkçe</strong>" in course  # the chosen one, not a link
    frame = client.get(f"/demo/launch/{link.id}?user=demo-ali&lang=tr").get_data(as_text=True)
    assert f"/demo/launch/{link.id}/start?user=demo-ali&amp;lang=tr" in frame
    unknown = client.get("/demo/?lang=xx").get_data(as_text=True)
    assert f"/demo/launch/{link.id}?user=demo-ali&amp;lang=en" in unknown
