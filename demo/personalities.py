"""Which LMS the demo platform plays: Moodle (the default), Canvas, Brightspace, Blackboard, Sakai.

A personality is one set of switches, read by the demo's handlers wherever that LMS answers
differently from Moodle. Each switch says where the behaviour was taken from (the LMS's own code,
its documentation, or a public tool tracker), so a test against a personality tests the LMS as
recorded, not as we wish it were. `DemoConfig(personality=...)` takes a name or a Personality;
`DemoConfig.plays` is the Personality, `DemoConfig.lms` its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LmsName = Literal["moodle", "canvas", "brightspace", "blackboard", "sakai"]
NAMES: tuple[LmsName, ...] = ("moodle", "canvas", "brightspace", "blackboard", "sakai")


@dataclass(frozen=True)
class Personality:
    """The switches of one LMS; every default is Moodle 4.5's behaviour."""

    name: LmsName = "moodle"
    # What the platform names itself (lti-platform-configuration's product_family_code, and
    # the launch's tool_platform claim): Canvas "canvas", Brightspace "desire2learn",
    # Blackboard "BlackboardLearn", Sakai "sakai". None: DemoConfig.product_family_code
    # ("codeblanks-demo", as the Moodle-like demo has always named itself).
    product_family_code: str | None = None

    # --- Canvas (instructure/canvas-lms) -------------------------------------------------

    # --- Brightspace (D2L) ---------------------------------------------------------------

    # --- Blackboard Learn ----------------------------------------------------------------

    # --- Sakai ---------------------------------------------------------------------------


MOODLE = Personality()

CANVAS = Personality(
    name="canvas",
    product_family_code="canvas",
)

BRIGHTSPACE = Personality(
    name="brightspace",
    product_family_code="desire2learn",
)

BLACKBOARD = Personality(
    name="blackboard",
    product_family_code="BlackboardLearn",
)

SAKAI = Personality(
    name="sakai",
    product_family_code="sakai",
)

BY_NAME: dict[str, Personality] = {
    p.name: p for p in (MOODLE, CANVAS, BRIGHTSPACE, BLACKBOARD, SAKAI)
}


def personality(value: str | Personality) -> Personality:
    """Return the Personality named `value` (or `value` itself); ValueError for an unknown name."""
    if isinstance(value, Personality):
        return value
    try:
        return BY_NAME[value]
    except KeyError:
        raise ValueError(f"unknown LMS personality {value!r}; one of {', '.join(NAMES)}") from None
