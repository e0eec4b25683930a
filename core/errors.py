"""The two roots of our own faults.

    Exception
     ├── LessonError   bad lesson data, raised at load time; names the file and the field
     └── GraderError   the sandbox, the store or the LMS broke; retry and alert

A student's failure is never an exception: it is a value (a RunResult, a Grade).
"""


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
