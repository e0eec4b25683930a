"""Figures through the whole pipeline: the demo LMS's launch, the tool, redis-server and a real
Celery worker on the warm sandbox. The heat-map lesson's solution is graded; its figure comes
back re-encoded, is kept with the submission, listed in its verdict and served to its author
(the URL's link token, no cookie) and not to another student; a practice run of it keeps and
serves its own; a later submission that draws nothing shows none, and the first one's figure
stays its own."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from sqlalchemy import func, select

from service.store.models import FigureImage
from testkit.lms import lms_with_a_worker, signed_in_headers
from testkit.waits import wait_for

LESSON = "expert/attention-heatmap"
SOLUTION = Path(__file__).resolve().parents[2] / "lessons" / LESSON / "solution" / "model.py"
ALT = "Dikkat ağırlıkları, x: anahtar (bakılan kelime), y: sorgu (bakan kelime)"


@pytest.mark.celery
@pytest.mark.slow
def test_a_drawing_solution_s_figure_is_graded_kept_and_served_to_its_author(
    tmp_path, redis_server
):
    changes = {"sandbox": "warm", "submit_rate": 1_000_000}
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=1, **changes) as lms,
        requests.Session() as student,
        requests.Session() as other,
        requests.Session() as teacher,
    ):
        link = lms.link(lesson=LESSON, title="Seeing attention", score=8.0)
        headers, placement_id = signed_in_headers(student, lms, "ali", link)
        api = f"{lms.tool_url}/api/placements/{placement_id}"

        def verdict_of(url):
            body = student.get(url, headers=headers).json()
            return body["verdict"] if body["status"] == "graded" else None

        sent = student.post(f"{api}/submissions", json={"source": SOLUTION.read_text()},
                            headers=headers)  # fmt: skip
        assert sent.status_code == 202, sent.text
        url = lms.tool_url + sent.json()["url"]
        verdict = wait_for(lambda: verdict_of(url), "the solution's verdict", 90)
        assert verdict["status"] == "passed", verdict["feedback"]
        [figure] = verdict["figures"]
        assert {k: figure[k] for k in ("width", "height", "case", "alt")} == {
            "width": 640, "height": 480, "case": "the lesson's sentence", "alt": ALT,
        }  # fmt: skip

        # the URL carries the page's link token: an <img> needs no cookie and no header
        image = requests.get(lms.tool_url + figure["url"], timeout=30)
        assert image.status_code == 200 and image.headers["Content-Type"] == "image/png"
        assert image.content.startswith(b"\x89PNG\r\n\x1a\n")
        with lms.store.reading() as session:
            assert session.scalar(select(func.count(FigureImage.id))) == 1
            kept = session.scalar(select(FigureImage.png))
        assert kept == image.content  # the worker's re-encoding, served as it was kept

        # another student of the course, launched and signed in: the same URL is a 404; the
        # course's teacher, launched, gets it
        bare = lms.tool_url + figure["url"].split("?")[0]
        other_headers, _ = signed_in_headers(other, lms, "berna", link)
        assert other.get(bare, headers=other_headers).status_code == 404
        teacher_headers, _ = signed_in_headers(teacher, lms, "ada", link)
        assert teacher.get(bare, headers=teacher_headers).content == image.content

        # a practice run of the same code draws the same map, kept as the run's own and
        # served to its author alone; on the student's own input it is drawn there too
        ran = student.post(f"{api}/runs", json={"source": SOLUTION.read_text(), "stdin": ""},
                           headers=headers)  # fmt: skip
        assert ran.status_code == 202, ran.text

        def result_of(run_url):
            body = student.get(lms.tool_url + run_url, headers=headers).json()
            return body["result"] if body["status"] == "done" else None

        result = wait_for(lambda: result_of(ran.json()["url"]), "the practice run", 90)
        assert result["status"] == "passed", result["feedback"]
        assert [(f["case"] if "case" in f else None, f["alt"]) for f in result["figures"]] == [
            (None, ALT)  # the same picture in the visible case is shown once, where first drawn
        ]
        run_image = requests.get(lms.tool_url + result["figures"][0]["url"], timeout=30)
        assert run_image.status_code == 200 and run_image.content == image.content
        run_bare = lms.tool_url + result["figures"][0]["url"].split("?")[0]
        assert other.get(run_bare, headers=other_headers).status_code == 404
        with lms.store.reading() as session:
            assert session.scalar(select(func.count(FigureImage.id))) == 2

        # a submission that draws nothing has no figure; the first one keeps its own
        plain = SOLUTION.read_text().replace("plt.show()", "pass")
        sent = student.post(f"{api}/submissions", json={"source": plain}, headers=headers)
        assert sent.status_code == 202, sent.text
        second = wait_for(lambda: verdict_of(lms.tool_url + sent.json()["url"]), "verdict", 90)
        assert second["status"] == "passed" and second["figures"] == []
        assert verdict_of(url)["figures"][0]["alt"] == ALT
        assert lms.worker.errors() == []
