import subprocess
import sys

from service.queue import GRADE_SUBMISSION, enqueue


def test_the_service_never_imports_task_bodies(tmp_path):
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from service import create_app\n"
        "from service.settings import Settings\n"
        f"create_app({{'SETTINGS': Settings(instance_dir=Path({str(tmp_path)!r}))}})\n"
        "print(sorted(m for m in sys.modules if m.startswith('workers')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_enqueue_says_false_when_the_broker_is_unreachable(app):
    assert enqueue(app.extensions["celery"], GRADE_SUBMISSION, [1]) is False
