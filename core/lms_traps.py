"""What a registration self-test found (checks), and the catalogue of known LMS traps.

A check is one thing the self-test tried (a token for one scope, the key set, a throwaway line
item, ...) and how it went, in our words. A trap is a known way an LMS keeps grades from
arriving, recognised from what was seen on the wire (`Wire`: status codes, OAuth error codes,
the error text, the scopes granted, what launches lacked) plus the LMS's product family
(`product_family_code`). Each trap says plainly what cannot work and what the LMS's admin
should change, in that LMS's own menus where we know them.

To add a trap: write a rule `(wire) -> bool`, its words, its fixes per family, and put a
`Trap` in CATALOGUE. The sources of each LMS behaviour are in /docs and the issue 31 research
notes (Canvas: app/controllers/lti/ims/concerns/*.rb, request_throttle.rb; Sakai:
LTI13Servlet.java; Brightspace: D2L KB 23662/18094; Blackboard: anthologydevdocs).
Pure: imports nothing of ours but core.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from core.messages import Message, from_json, say, to_json

# the scopes, by the short names the catalogue uses (the URIs are the LTI services' own)
LINEITEM, SCORE, RESULT, NRPS = "lineitem", "score", "result", "nrps"
# product families as LMSs name themselves (lti-platform-configuration, tool_platform)
CANVAS, D2L, BLACKBOARD, SAKAI, MOODLE = (
    "canvas",
    "desire2learn",
    "BlackboardLearn",
    "sakai",
    "moodle",
)


class CheckStatus(enum.StrEnum):
    """How one check of a self-test went."""

    OK = "ok"
    WARNING = "warning"  # it could not be tried, or it worked with a caveat
    FAILED = "failed"


@dataclass(frozen=True)
class Check:
    """One named check of a self-test, and what it found, in our words."""

    name: str
    status: CheckStatus
    words: Message


@dataclass(frozen=True)
class Seen:
    """What one request of the self-test met: the status and the error, for the rules only.

    `text` is the LMS's error text, lowercased: matched against, never shown on a page.
    """

    status: int | None = None  # None: no answer at all (unreachable, timed out)
    error: str = ""  # an OAuth error code (invalid_scope) or Canvas's errors.type
    text: str = ""
    throttled: bool = False  # Canvas's 403 with no request cost left


@dataclass
class Wire:
    """Everything the rules look at: what each step met, and what launches brought."""

    family: str = ""  # product_family_code, from the registration or a launch; "" unknown
    seen: dict[str, Seen] = field(default_factory=dict)  # by step: token:score, score_post...
    granted: dict[str, bool] = field(default_factory=dict)  # scope (short name) -> granted
    key_set_ok: bool | None = None
    launched: bool = False  # a course with a launch exists
    course_has_ags: bool | None = None  # its launches carried an AGS claim
    links_without_line_item: int = 0  # placements whose launches named no line item
    launch_scopes: tuple[str, ...] | None = None  # the AGS claim's scope list, short names

    def failed(self, step: str) -> Seen | None:
        """Return what a step met if it failed, else None."""
        return self.seen.get(step)

    def any_failed(self, *steps: str) -> list[Seen]:
        """Return what the named steps met, for those that failed."""
        return [s for s in (self.seen.get(step) for step in steps) if s is not None]


@dataclass(frozen=True)
class Trap:
    """A known trap: how it is recognised, what it means, and the admin's fix per LMS."""

    id: str
    blocks_grades: bool
    applies: Callable[[Wire], bool]
    words: Callable[[], Message]
    fixes: Callable[[], Mapping[str, Message]]  # by family; "" for any other LMS

    def fix(self, family: str) -> Message:
        """Return the fix in the words of this LMS, or the general one."""
        found = self.fixes()
        return found.get(family) or found[""]


@dataclass(frozen=True)
class Found:
    """A trap met by one self-test, with its words and its fix for this LMS."""

    id: str
    blocks_grades: bool
    words: Message
    fix: Message


def traps_in(wire: Wire) -> list[Found]:
    """Return every trap of the catalogue that the wire shows, blocking ones first."""
    found = [
        Found(trap.id, trap.blocks_grades, trap.words(), trap.fix(wire.family))
        for trap in CATALOGUE
        if trap.applies(wire)
    ]
    return sorted(found, key=lambda f: not f.blocks_grades)


# --- the rules ---------------------------------------------------------------------------

# Traps that mean the LMS shut the tool out: a launch from it since then disproves them.
SHUT_OUT = frozenset({"tool_not_enabled", "developer_key_off", "key_set_unusable"})
TOKEN_STEPS = ("token:all", "token:lineitem", "token:score", "token:result", "token:nrps")
SERVICE_STEPS = ("line_item_create", "score_post", "score_read", "nrps_page", "line_item_delete")
DEVELOPER_KEY_TEXTS = ("invalid developer key", "unknown or inactive developer key", "not linked")


def _client_refused(wire: Wire) -> bool:
    """The token endpoint refuses the tool itself, whatever the scope: no scope is granted
    and every refusal is a 4xx that is not about a scope (Moodle's 401 for a tool pending
    activation, `invalid_client`, and Canvas's 400 "JWS signature invalid." for a key that
    is OFF or deleted, oauth2_provider_controller.rb)."""
    met = wire.any_failed(*TOKEN_STEPS)
    if not met or any(wire.granted.values()) or _audience_refused(wire):
        return False
    return all(
        s.status is not None
        and 400 <= s.status < 500
        and not s.throttled
        and s.error != "invalid_scope"
        for s in met
    )


def _audience_refused(wire: Wire) -> bool:
    """The token endpoint cannot validate the tool's client assertion: no scope is granted
    and every token request met `invalid_grant` about the assertion. Brightspace answers so
    when the assertion's `aud` is the token URL and not its separate OAuth2 Audience (400
    "Error validating assertion", pylti1.3#43; D2L KB 23662)."""
    met = wire.any_failed(*TOKEN_STEPS)
    if not met or any(wire.granted.values()):
        return False
    return all(s.error == "invalid_grant" and "assertion" in s.text for s in met)


def _developer_key_off(wire: Wire) -> bool:
    met = wire.any_failed(*SERVICE_STEPS)
    return any(s.status == 401 and any(t in s.text for t in DEVELOPER_KEY_TEXTS) for s in met)


def _scope_refused(scope: str) -> Callable[[Wire], bool]:
    def rule(wire: Wire) -> bool:
        if _client_refused(wire) or _audience_refused(wire):
            return False  # the whole tool is refused: no scope tells anything
        return wire.granted.get(scope) is False

    return rule


def _canvas_422(*texts: str) -> Callable[[Wire], bool]:
    def rule(wire: Wire) -> bool:
        met = wire.any_failed("score_post", "line_item_create")
        return any(s.status == 422 and any(t in s.text for t in texts) for s in met)

    return rule


def _throttled(wire: Wire) -> bool:
    return any(s.throttled for s in wire.seen.values())


def _ags_erring(wire: Wire) -> bool:
    met = wire.any_failed("line_item_create", "score_post", "score_read")
    return any(s.status is None or s.status >= 500 or s.status == 429 for s in met)


def _score_refused_otherwise(wire: Wire) -> bool:
    seen = wire.failed("score_post")
    if seen is None or seen.status is None or seen.status >= 500 or seen.throttled:
        return False
    known = (_developer_key_off, _canvas_422("not a student", "unpublished", "concluded"))
    return not any(rule(wire) for rule in known) and seen.status != 429


def _no_ags_in_launches(wire: Wire) -> bool:
    return wire.launched and wire.course_has_ags is False


def _links_without_line_item(wire: Wire) -> bool:
    return wire.links_without_line_item > 0


def _launch_lists_no_score(wire: Wire) -> bool:
    scopes = wire.launch_scopes
    return scopes is not None and SCORE not in scopes and wire.granted.get(SCORE) is True


def _token_unreachable(wire: Wire) -> bool:
    met = wire.any_failed(*TOKEN_STEPS)
    return bool(met) and all(s.status is None or s.status >= 500 for s in met)


def _line_item_left(wire: Wire) -> bool:
    return wire.failed("line_item_delete") is not None


# --- the words ---------------------------------------------------------------------------


def _scope_fixes(scope: Message) -> dict[str, Message]:
    return {
        SAKAI: say(
            "In Sakai: Administration Workspace > External Tools > this tool, tick both "
            '"Allow External Tool to return grades" and "Allow External Tool to create grade '
            'columns" (Sakai grants grade scopes only with both), and save.'
        ),
        CANVAS: say(
            "In Canvas: Admin > Developer Keys > this key > Edit, turn on the {scope} scope "
            "and save. Canvas refuses a token for every scope when one asked for is off.",
            scope=scope,
        ),
        MOODLE: say(
            "In Moodle: Site administration > Plugins > External tool > Manage tools > this tool, "
            'set "IMS LTI Assignment and Grade Services" to "Use this service for grade sync '
            'and column management" (and "IMS LTI Names and Role Provisioning" to use it).'
        ),
        D2L: say(
            "In Brightspace: Admin Tools > Manage Extensibility > LTI Advantage, tick the "
            "Assignment and Grade Services and Names and Role Provisioning extensions on the "
            "registration and on its deployment."
        ),
        BLACKBOARD: say(
            "In Blackboard: Administrator Panel > LTI Tool Providers > this tool > Manage "
            "Placements, allow grade service and membership service access."
        ),
        "": say("Ask the LMS's administrator to grant this tool the {scope} scope.", scope=scope),
    }


def _client_fixes() -> dict[str, Message]:
    return {
        MOODLE: say(
            "In Moodle: Site administration > Plugins > External tool > Manage tools: the tool "
            "may be pending; activate it."
        ),
        CANVAS: _developer_key_fixes()[CANVAS],
        D2L: say(
            "In Brightspace: a dynamically registered tool starts disabled. Enable the "
            "registration, then add a deployment for the org units that use it."
        ),
        BLACKBOARD: say(
            "In Blackboard: Administrator Panel > LTI Tool Providers: set the tool's status to "
            '"Approved".'
        ),
        "": say(
            "Check in the LMS that the tool is enabled (activated, approved) and that its "
            "client id and key set URL are the ones registered here."
        ),
    }


def _developer_key_fixes() -> dict[str, Message]:
    return {
        CANVAS: say(
            "In Canvas: Admin > Developer Keys: set this key's State to ON, then install it "
            "with Settings > Apps > + App > By Client ID in the account or the course."
        ),
        "": say("Check that the tool is enabled and deployed in the course's account."),
    }


def _general(fix: Message) -> Callable[[], Mapping[str, Message]]:
    return lambda: {"": fix}


def _line_item_fixes() -> dict[str, Message]:
    return {
        D2L: say(
            "Brightspace makes no grade item for a link placed by hand: the tool makes one at "
            "the link's first launch (with the line item scope). Teachers may attach a grade "
            "item to the link instead."
        ),
        BLACKBOARD: say(
            "In Blackboard, a link placed without a line item has no gradebook column: the "
            "tool makes one at its first launch when allowed to, or place the lesson again "
            "with the tool's lesson picker, which sends one."
        ),
        "": say("The tool makes a line item at the link's first launch, or when a score is sent."),
    }


CATALOGUE: tuple[Trap, ...] = (
    Trap(
        "key_set_unusable",
        True,
        lambda wire: wire.key_set_ok is False,
        lambda: say(
            "The LMS's key set could not be fetched or holds no usable key: launches cannot "
            "be verified, so no student reaches a lesson and no grade is made."
        ),
        _general(
            say(
                "Check the key set (JWKS) URL registered here and that this server can reach it "
                "(on-premises LMSs: CODEBLANKS_OUTBOUND_ALLOW)."
            )
        ),
    ),
    Trap(
        "token_unreachable",
        True,
        _token_unreachable,
        lambda: say("The LMS's token endpoint did not answer: no grade can be sent."),
        _general(
            say(
                "Check that this server can reach the LMS (on-premises LMSs: "
                "CODEBLANKS_OUTBOUND_ALLOW) and the token URL registered here."
            )
        ),
    ),
    Trap(
        "tool_not_enabled",
        True,
        _client_refused,
        lambda: say(
            "The LMS refuses the tool's own credentials: it grants no service, so grades "
            "cannot be sent."
        ),
        _client_fixes,
    ),
    Trap(
        "token_audience",
        True,
        _audience_refused,
        lambda: say(
            "The LMS's token endpoint cannot validate the tool's signed request (invalid_grant): "
            "it wants another audience (aud) than its token URL, so no grade can be sent."
        ),
        lambda: {
            D2L: say(
                "In Brightspace: copy the Brightspace OAuth2 Audience from the tool's "
                "registration (Manage Extensibility > LTI Advantage > this tool) into this "
                "tool: `codeblanks platforms add --replace --token-audience ...` with the "
                "platform's other values, or the admin page's Token audience field."
            ),
            "": say(
                "Ask the LMS's administrator which audience (aud) its token endpoint wants in "
                "a client assertion, and give it to this tool: `codeblanks platforms add "
                "--replace --token-audience ...`, or the admin page's Token audience field."
            ),
        },
    ),
    Trap(
        "developer_key_off",
        True,
        _developer_key_off,
        lambda: say(
            "The LMS refuses the tool's calls for this course (the tool's key is off or not "
            "deployed here): grades cannot be sent."
        ),
        _developer_key_fixes,
    ),
    Trap(
        "no_score_scope",
        True,
        _scope_refused(SCORE),
        lambda: say("This LMS granted no score scope: grades cannot be sent."),
        lambda: _scope_fixes(say("score")),
    ),
    Trap(
        "no_lineitem_scope",
        False,
        _scope_refused(LINEITEM),
        lambda: say(
            "This LMS granted no line item scope: the tool cannot make a gradebook column for "
            "a link that has none."
        ),
        lambda: _scope_fixes(say("line item")),
    ),
    Trap(
        "no_result_scope",
        False,
        _scope_refused(RESULT),
        lambda: say(
            "This LMS granted no result scope: the tool cannot read back what the gradebook holds."
        ),
        lambda: _scope_fixes(say("result")),
    ),
    Trap(
        "no_nrps_scope",
        False,
        _scope_refused(NRPS),
        lambda: say(
            "This LMS granted no roster scope (NRPS): gradebooks list only students who launched."
        ),
        lambda: _scope_fixes(say("names and roles")),
    ),
    Trap(
        "course_unpublished",
        True,
        _canvas_422("not a student"),
        lambda: say(
            'The LMS refused a score with "user not found in course or is not a student": in '
            "Canvas this is what an unpublished course answers."
        ),
        lambda: {
            CANVAS: say("In Canvas: publish the course (Home > Publish)."),
            "": say("Check that the course is published and the user is a student in it."),
        },
    ),
    Trap(
        "assignment_unpublished",
        True,
        _canvas_422("unpublished"),
        lambda: say("The LMS refused a score because the assignment is unpublished."),
        lambda: {
            CANVAS: say(
                "In Canvas: publish the assignments that deep linking made (they start "
                "unpublished)."
            ),
            "": say("Publish the gradebook column (assignment) in the LMS."),
        },
    ),
    Trap(
        "course_concluded",
        True,
        _canvas_422("concluded"),
        lambda: say("The LMS refused a score because the course has concluded."),
        _general(say("Extend the course's end date in the LMS, or grades stay where they are.")),
    ),
    Trap(
        "rate_limited",
        False,
        _throttled,
        lambda: say(
            "The LMS is rate limiting this tool (403, no request cost left): grades wait and "
            "are sent when it lets them through."
        ),
        _general(
            say(
                "Nothing to change at once; in Canvas every tool sharing this developer key "
                "shares one budget, so give busy tools keys of their own."
            )
        ),
    ),
    Trap(
        "ags_erring",
        True,
        _ags_erring,
        lambda: say(
            "The LMS's grade service failed (a server error or no answer): grades wait until "
            "it works."
        ),
        _general(say("Check the LMS's health and logs; run the self-test again later.")),
    ),
    Trap(
        "score_refused",
        True,
        _score_refused_otherwise,
        lambda: say("The LMS refused the test score for a student of the course."),
        _general(
            say("Check that the course and its gradebook are open and the student is enrolled.")
        ),
    ),
    Trap(
        "no_ags_in_launches",
        True,
        _no_ags_in_launches,
        lambda: say(
            "Launches from this LMS carry no grade service (no AGS claim): this course's "
            "grades cannot be sent."
        ),
        lambda: _scope_fixes(say("score")),
    ),
    Trap(
        "links_without_line_item",
        False,
        _links_without_line_item,
        lambda: say("Some links were launched without a line item (gradebook column)."),
        _line_item_fixes,
    ),
    Trap(
        "launch_lists_no_score",
        False,
        _launch_lists_no_score,
        lambda: say(
            "Launches list no score scope, though the token endpoint grants it: the tool "
            "asks the token endpoint, so grades are sent."
        ),
        _general(say("Nothing to change.")),
    ),
    Trap(
        "line_item_left_behind",
        False,
        _line_item_left,
        lambda: say('The throwaway line item "CodeBlanks self-test" could not be deleted.'),
        _general(say('Delete the column "CodeBlanks self-test" from the course\'s gradebook.')),
    ),
)


@dataclass(frozen=True)
class SelfTest:
    """One self-test of one platform: its checks and the traps they showed."""

    checks: tuple[Check, ...]
    traps: tuple[Found, ...]

    @property
    def grades_ok(self) -> bool:
        """Return whether grades can be sent: no trap that blocks them was met."""
        return not any(trap.blocks_grades for trap in self.traps)

    def to_json(self) -> dict[str, object]:
        """Return the self-test as plain JSON data, for the store and `--json`."""
        return {
            "grades_ok": self.grades_ok,
            "checks": [
                {"name": c.name, "status": c.status.value, "words": to_json(c.words)}
                for c in self.checks
            ],
            "traps": [
                {
                    "id": t.id,
                    "blocks_grades": t.blocks_grades,
                    "words": to_json(t.words),
                    "fix": to_json(t.fix),
                }
                for t in self.traps
            ],
        }

    @classmethod
    def from_json(cls, data: object) -> SelfTest | None:
        """Read back what to_json stored; None for anything malformed."""
        try:
            assert isinstance(data, dict)
            checks = tuple(
                Check(str(c["name"]), CheckStatus(c["status"]), _message(c["words"]))
                for c in data["checks"]
            )
            traps = tuple(
                Found(
                    str(t["id"]), bool(t["blocks_grades"]), _message(t["words"]), _message(t["fix"])
                )  # fmt: skip
                for t in data["traps"]
            )
        except (AssertionError, KeyError, TypeError, ValueError):
            return None
        return cls(checks, traps)


def _message(data: object) -> Message:
    found = from_json(data)
    if not isinstance(found, Message):
        raise ValueError("not a sentence")
    return found
