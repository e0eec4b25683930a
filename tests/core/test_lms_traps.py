"""The catalogue's rules on wires written by hand: which trap a token endpoint's refusal is."""

from core.lms_traps import D2L, MOODLE, TOKEN_STEPS, Seen, Wire, traps_in

ASSERTION = Seen(400, "invalid_grant", "error validating assertion: the aud is invalid")


def ids(wire):
    return [found.id for found in traps_in(wire)]


def test_every_token_request_refused_over_its_assertion_is_the_audience():
    wire = Wire(family=D2L, seen=dict.fromkeys(TOKEN_STEPS, ASSERTION))
    wire.granted = dict.fromkeys(("lineitem", "score", "result", "nrps"), False)
    [found] = traps_in(wire)
    assert found.id == "token_audience" and found.blocks_grades
    assert "Brightspace OAuth2 Audience" in str(found.fix)
    wire.family = MOODLE
    assert "--token-audience" in str(traps_in(wire)[0].fix)  # the general fix


def test_a_refusal_that_is_not_about_the_assertion_is_the_tool_refused():
    other = Seen(400, "invalid_grant", "the grant has expired")
    assert ids(Wire(seen=dict.fromkeys(TOKEN_STEPS, other))) == ["tool_not_enabled"]
    # one scope granted: the assertion was good, its aud too
    wire = Wire(seen={"token:score": ASSERTION}, granted={"lineitem": True})
    assert "token_audience" not in ids(wire)
