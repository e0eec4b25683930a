"""The three roots of what goes wrong: our faults, and a request we refuse.

    Exception
     ├── LessonError   bad lesson data, raised at load time; names the file and the field
     ├── GraderError   the sandbox, the store or the LMS broke; retry and alert
     └── Refusal       a request we will not do: an HTTP status, a stable code, its words
          ├── SourceRefused      core.sources: code too large, not UTF-8, a NUL (413/400)
          ├── AnswerError        core.questions: an answer that does not fit its question (400)
          ├── ValueRefused       core.values: a value channel we cannot read (a case's error)
          ├── Refused            service.web.student.actions: what a student may not do
          ├── LtiProblem         service.lti.claims: a title, a detail and what to check
          │    ├── LaunchProblem        a refused launch (service.lti.claims)
          │    └── RegistrationProblem  a refused dynamic registration (service.lti.registration)
          ├── RegradeProblem     service.store.regrades: a regrade that cannot start or be sent
          └── TokenRefused       service.store.registration_tokens: a registration URL refused

A refusal's words are a core.messages text, made where it is raised (below Flask, often) and
worded in the reader's language only when service.web.boundary renders it: the one place a
refusal becomes a page or a JSON answer `{"error": code, "message": words}`. `str()` is the
English, for logs and the CLI. A student's failure is never an exception: it is a value (a
RunResult, a Grade); ValueRefused ends as one, inside core.cases.
"""

from __future__ import annotations

from core.messages import Text


class LessonError(Exception):
    """A lesson on disk is missing, malformed or inconsistent."""

    def __init__(self, path: str, field: str | None, problem: str) -> None:
        self.path = path
        self.field = field
        self.problem = problem
        where = f"{path}: {field}" if field else path
        super().__init__(f"{where}: {problem}")


class GraderError(Exception):
    """The grading machinery (not the student's code) failed."""


class Refusal(Exception):  # noqa: N818  a refusal is no error of ours
    """A request refused: its HTTP status, a stable machine-readable code and its words."""

    status: int = 400
    code: str = "refused"

    def __init__(
        self,
        words: Text,
        *,
        status: int | None = None,
        code: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(str(words))
        self.words = words
        self.status = self.status if status is None else status
        self.code = self.code if code is None else code
        self.retry_after = retry_after
