"""The student's course page: the course's placed lessons, and their score on each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from flask_babel import gettext as _

from core.lesson_scores import LessonScore
from core.messages import say
from service.store import courses, grades, memberships, placement_rows, policies, policy_exceptions
from service.web.student.actions import Asker, Refused


@dataclass(frozen=True)
class Listed:
    """A placed lesson; its score only for placements this student may open."""

    placement_id: int
    title: str
    points: float
    due: datetime | None
    opens: bool
    score: LessonScore | None  # None too while the placement holds its scores
    held: bool = False


@dataclass(frozen=True)
class CourseListing:
    """The course, its lessons, and whether this user teaches it."""

    course_id: int
    title: str
    lessons: list[Listed]
    teaches: bool


def student_listing(asker: Asker, course_id: int) -> CourseListing:
    """List a course's placements for one of its members; Refused for anybody else."""
    user, catalog = asker.user, asker.catalog
    with asker.store.reading() as session:
        course = courses.get(session, course_id)
        placements = placement_rows.of_course(session, course_id)
        member = memberships.is_member(session, course_id, user.user_id)
        opened = any(user.may_open(p.id) for p in placements)
        if course is None or not (member or opened or user.teaches(course_id)):
            raise Refused(403, "not_a_member", say("Open this course from your LMS first."))
        exceptions = policy_exceptions.of_user(session, user.user_id, [p.id for p in placements])
        listed = []
        for placement in placements:
            lesson = catalog.lesson(placement.lesson_id)
            opens = user.may_open(placement.id) and lesson is not None
            score = (
                grades.score(session, placement, lesson, user.user_id)
                if opens and lesson is not None and not placement.holds_scores
                else None
            )
            listed.append(
                Listed(
                    placement_id=placement.id,
                    title=placement.title or (lesson.title if lesson else placement.lesson_id),
                    points=lesson.points if lesson else 0.0,
                    due=policies.policy_of(placement, exceptions.get(placement.id)).due_at,
                    opens=opens,
                    score=score,
                    held=placement.holds_scores,
                )
            )
    return CourseListing(
        course_id, course.title or _("Your course"), listed, user.teaches(course_id)
    )
