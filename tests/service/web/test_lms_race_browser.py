"""Three answers and a submission within one second reach a Moodle-strict LMS as the final
score, within 5 s: the demo LMS refuses a second score in the same second (409) and blanks
any score that is not FullyGraded, as Moodle 4.5 does (FINDINGS.md)."""

import pytest

from testkit.chromium import headless
from testkit.devserver import dev_server
from testkit.lms_race import FINAL, race
from testkit.slowness import scaled

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_fast_student_gets_the_final_score_in_the_lms_within_5_s(tmp_path):
    with dev_server(tmp_path / "instance") as base, headless() as browser:
        context = browser.new_context(viewport={"width": 1100, "height": 900})
        context.set_default_timeout(30_000)
        context.route("**/favicon.ico", lambda route: route.fulfill(status=204))
        # both bounds are the reference host's, stretched by this one's slowness as every timed
        # bound is: a CI loaded by other work once clicked in 1.47 s (the race is the same)
        found = race(context, base, "Ali Student", deadline_s=scaled(5.0))
    assert found.clicks_s < scaled(1.0), f"the four clicks took {found.clicks_s:.2f} s"
    assert found.final_after_s is not None, (
        f"the demo LMS showed {found.last_seen!r}, not {FINAL}, by the deadline"
    )
