from datetime import UTC, datetime, timedelta

import pytest

from core.platforms import Outage, Probe, probe_wait, probing

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("probes", "wait_s"),
    [(0, 2.0), (1, 2.0), (2, 4.0), (3, 4.0), (4, 4.0), (1100, 4.0), (10**9, 4.0)],
)
def test_probes_of_a_platform_that_is_away_back_off_to_every_4_s(probes, wait_s):
    assert probe_wait(probes) == wait_s


def outage(probe_in_s, user_id=1, placement_id=10):
    return Outage(NOW - timedelta(minutes=5), 7, NOW + timedelta(seconds=probe_in_s), user_id,
                  placement_id)  # fmt: skip


@pytest.mark.parametrize(
    ("found", "pair", "expected"),
    [
        (None, (1, 10), (Probe.POST, 0.0)),  # the platform answers: post
        (outage(0), (2, 10), (Probe.POST, 0.0)),  # a probe is due: whoever comes probes
        (outage(-3), (1, 10), (Probe.POST, 0.0)),
        (outage(4), (1, 10), (Probe.WAIT, 4.0)),  # this pair probes next, in 4 s
        (outage(4), (2, 10), (Probe.PAUSE, 0.0)),  # another pair probes: no post
        (outage(4), (1, 11), (Probe.PAUSE, 0.0)),  # the same user on another placement too
    ],
)
def test_during_an_outage_only_the_pair_that_probes_posts(found, pair, expected):
    assert probing(found, *pair, NOW) == expected
