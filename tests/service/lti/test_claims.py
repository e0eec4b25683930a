import pytest

from service.lti.claims import (
    DL,
    LTI,
    LaunchProblem,
    check_audience,
    check_message,
    client_id_of,
    is_teacher,
)

BASE = "https://tool.example.org/grader"


def launch(**changes):
    body = {
        "iss": "https://lms.example.org",
        "aud": "client-1",
        "sub": "user-1",
        LTI + "version": "1.3.0",
        LTI + "message_type": "LtiResourceLinkRequest",
        LTI + "deployment_id": "dep-1",
        LTI + "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
        LTI + "resource_link": {"id": "rl-1"},
        LTI + "context": {"id": "course-1"},
        LTI + "target_link_uri": BASE + "/lti/launch",
    }
    for key, value in changes.items():
        key = key.replace("LTI_", LTI).replace("DL_", DL)
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def deep_link(**settings):
    base = {
        "deep_link_return_url": "https://lms.example.org/dl",
        "accept_types": ["ltiResourceLink"],
    }
    return launch(
        LTI_message_type="LtiDeepLinkingRequest",
        LTI_resource_link=None,
        DL_deep_linking_settings={**base, **settings},
    )


def test_a_good_launch_passes():
    assert check_message(launch(), BASE) == "LtiResourceLinkRequest"
    assert check_message(deep_link(), BASE) == "LtiDeepLinkingRequest"
    review = launch(LTI_message_type="LtiSubmissionReviewRequest", LTI_for_user={"user_id": "s-1"})
    assert check_message(review, BASE) == "LtiSubmissionReviewRequest"


@pytest.mark.parametrize(
    ("body", "title"),
    [
        (launch(LTI_version="1.1"), "Unsupported LTI version"),
        (launch(LTI_message_type="LtiDataPrivacyLaunchRequest"), "Unsupported message type"),
        (launch(LTI_message_type="LtiSubmissionReviewRequest"), "Missing for_user"),
        (
            launch(LTI_message_type="LtiSubmissionReviewRequest", LTI_for_user={"user_id": ""}),
            "Missing for_user.user_id",
        ),
        (launch(sub=None), "Missing sub (the user id)"),
        (launch(sub="x" * 256), "Oversized sub (the user id)"),
        (launch(LTI_deployment_id=None), "Missing deployment_id"),
        (launch(LTI_deployment_id="d" * 300), "Oversized deployment_id"),
        (launch(LTI_roles=None), "Missing roles"),
        (launch(LTI_roles="Learner"), "Missing roles"),
        (launch(LTI_resource_link=None), "Missing resource link"),
        (launch(LTI_resource_link={"id": ""}), "Missing resource_link.id"),
        (launch(LTI_context={"id": "c" * 256}), "Oversized context.id"),
        (
            launch(LTI_target_link_uri="https://evil.example.org/lti/launch"),
            "Foreign target_link_uri",
        ),
        (launch(LTI_target_link_uri="https://tool.example.org/other"), "Foreign target_link_uri"),
        (launch(LTI_target_link_uri=None), "Missing target_link_uri"),
        (launch(name="n" * 5000), "Oversized claim"),
        (deep_link(deep_link_return_url=None), "Missing return URL"),
        (deep_link(accept_types=["file"]), "Unsupported content type"),
        (launch(LTI_message_type="LtiDeepLinkingRequest"), "Missing deep linking settings"),
    ],
)
def test_bad_launches_are_refused_with_a_title(body, title):
    with pytest.raises(LaunchProblem) as info:
        check_message(body, BASE)
    assert str(info.value.title) == title
    assert 400 <= info.value.status < 500


@pytest.mark.parametrize(
    ("aud", "azp", "ok"),
    [
        ("client-1", None, True),
        (["client-1"], None, True),
        (["client-1", "other"], "client-1", True),
        (["client-1", "other"], None, False),
        (["other", "client-1"], "other", False),
        ("client-1", "other", False),
        ("other", None, False),
        ([], None, False),
    ],
)
def test_audience_and_authorized_party(aud, azp, ok):
    body = launch(aud=aud, azp=azp)
    if ok:
        check_audience(body, "client-1")
    else:
        with pytest.raises(LaunchProblem):
            check_audience(body, "client-1")


def test_client_id_of_needs_azp_for_several_audiences():
    assert client_id_of(launch(aud=["a"])) == "a"
    assert client_id_of(launch(aud=["a", "b"], azp="b")) == "b"
    with pytest.raises(LaunchProblem):
        client_id_of(launch(aud=["a", "b"]))


@pytest.mark.parametrize(
    ("roles", "teacher"),
    [
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"], False),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"], True),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"], True),
        (["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"], True),
        ([], False),
    ],
)
def test_roles(roles, teacher):
    assert is_teacher(launch(LTI_roles=roles)) is teacher
