"""The words the pages show for an enum's member (a status, a reveal policy): one table per
enum, in the request's language.

A status stays its stored word wherever a machine reads it (a CSS class, a form's value, the
CSV, the JSON API); only the words shown beside it are translated. Each table is keyed by its
enum's members, and tests/service/web/test_labels.py holds it to every member, so a new
member cannot go unworded. A value that is no member is shown as it is, never refused.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TypeVar

from flask import Flask
from flask_babel import gettext as _
from flask_babel import pgettext

from core.lms_traps import CheckStatus
from core.placements import Reveal
from core.runs import RunStatus
from service.store.models import PracticeStatus, SubmissionStatus, SyncStatus

Status = TypeVar("Status", bound=enum.StrEnum)


def init_app(app: Flask) -> None:
    """Give every template the label functions, and the sync states for the legend."""
    app.add_template_global(status_label, "status_label")
    app.add_template_global(case_label, "case_label")
    app.add_template_global(submission_state, "submission_state")
    app.add_template_global(practice_state, "practice_state")
    app.add_template_global(sync_label, "sync_label")
    app.add_template_global(SyncStatus, "SyncStatus")
    app.add_template_global(check_label, "check_label")


def run_statuses() -> dict[RunStatus, str]:
    """Return the words of each run status."""
    return {
        RunStatus.PASSED: _("Passed"),
        RunStatus.FAILED: _("Output differs"),
        RunStatus.ERROR: _("Error"),
        RunStatus.TIMEOUT: _("Time limit exceeded"),
        RunStatus.MEMORY_LIMIT: _("Memory limit exceeded"),
        RunStatus.OUTPUT_LIMIT: _("Too much output"),
        RunStatus.REJECTED: _("Not run"),
    }


def submission_statuses() -> dict[SubmissionStatus, str]:
    """Return the words of each submission status (a graded one shows its verdict instead)."""
    return {
        SubmissionStatus.QUEUED: _("Queued…"),
        SubmissionStatus.RUNNING: _("Running…"),
        SubmissionStatus.GRADED: _("Graded."),
    }


def practice_statuses() -> dict[PracticeStatus, str]:
    """Return the words of each practice run status (a done one shows what it found)."""
    return {
        PracticeStatus.QUEUED: _("Your practice run is waiting for a sandbox…"),
        PracticeStatus.RUNNING: _("Running your code (a practice run)…"),
        PracticeStatus.DONE: _("Practice run done."),
    }


def sync_statuses() -> dict[SyncStatus, str]:
    """Return the words of each grade sync status."""
    # the context "grade sync": a case that "failed" is another word in Turkish than a sync
    return {
        SyncStatus.PENDING: pgettext("grade sync", "pending"),
        SyncStatus.SENT: pgettext("grade sync", "sent"),
        SyncStatus.SKIPPED: pgettext("grade sync", "skipped"),
        SyncStatus.FAILED: pgettext("grade sync", "failed"),
        SyncStatus.HELD: pgettext("grade sync", "held"),
    }


def reveals() -> dict[Reveal, str]:
    """Return the words of each reveal policy (the teacher's settings form offers them)."""
    return {
        Reveal.NEVER: _("Never"),
        Reveal.AFTER_PASS: _("After a passing submission"),
        Reveal.AFTER_ATTEMPTS: _("After the last attempt (needs a maximum of attempts)"),
        Reveal.AFTER_DUE: _("After the due date"),
    }


def check_statuses() -> dict[CheckStatus, str]:
    """Return the words of each self-test check's status (the admin's self-test page)."""
    return {
        CheckStatus.OK: pgettext("self-test check", "ok"),
        CheckStatus.WARNING: pgettext("self-test check", "warning"),
        CheckStatus.FAILED: pgettext("self-test check", "failed"),
    }


def check_label(status: object) -> str:
    """Return a self-test check's status as a word."""
    return _label(check_statuses, CheckStatus, status)


def status_label(status: object) -> str:
    """Return a run status as words."""
    return _label(run_statuses, RunStatus, status)


def case_label(status: object) -> str:
    """Return a case's run status as words: a failed case may be a value, not an output."""
    failed = _member(RunStatus, status) is RunStatus.FAILED
    return str(_("Failed")) if failed else status_label(status)


def submission_state(status: object) -> str:
    """Return a submission's status as words ("Queued…")."""
    return _label(submission_statuses, SubmissionStatus, status)


def practice_state(status: object) -> str:
    """Return a practice run's status as words ("Running your code (a practice run)…")."""
    return _label(practice_statuses, PracticeStatus, status)


def sync_label(status: object) -> str:
    """Return a grade sync's status as a word."""
    return _label(sync_statuses, SyncStatus, status)


def _label(table: Callable[[], dict[Status, str]], kind: type[Status], status: object) -> str:
    member = _member(kind, status)
    if member is None:
        return "" if status is None else str(status)
    return str(table()[member])


def _member(kind: type[Status], status: object) -> Status | None:
    return next((member for member in kind if member == status), None)
