"""service/wording: a core text worded for a language outside a request (a worker's comment),
with the catalogs the pages use (issue 29, point 5)."""

import pytest

from core.messages import Percent, say, say_n
from core.student_views import score_comment
from service.web.feedback import rendered
from service.wording import supported, tag_of, worded
from tests.core.test_student_views import FINITE, SIX, graded, ok, wrong

BEST = graded(SIX, [ok(), ok(), ok(), wrong(), wrong(), ok()])
COMMENT = score_comment(BEST, True, [(1.0, 1.0), (0.5, 1.0), (None, 2.0)], 0.25)


def test_a_comment_reads_in_turkish_with_its_plurals_and_numbers():
    assert worded(COMMENT, "tr") == (
        "6 testten 4 tanesi geçti. 'v4' testi geçemedi. "
        f"Gizli '{FINITE.name}' testi geçemedi. 3 sorudan 1 tanesi doğru. 1 soru kısmen doğru. "
        "1 soru cevaplanmadı. Geç teslim edilen iş puanlarının %25 kadarını kaybetti."
    )


@pytest.mark.parametrize("tag", [None, "en", "en-US", "de", "xx_YY", "", "tr;drop", 7])
def test_a_language_the_tool_lacks_reads_in_english(tag):
    assert worded(COMMENT, tag) == str(COMMENT)


@pytest.mark.parametrize("tag", ["tr", "tr-TR", "tr_TR", "TR"])
def test_every_way_an_lms_says_turkish_reads_turkish(tag):
    assert worded(say("No code handed in yet."), tag) == "Henüz kod teslim etmedin."


def test_a_launch_locale_is_kept_only_as_a_tag():
    assert [tag_of(t) for t in ("tr", "en-US", "zh-Hant-TW")] == ["tr", "en-US", "zh-Hant-TW"]
    assert [tag_of(t) for t in ("", "x" * 36, "tr<script>", None, ["tr"])] == [None] * 5
    assert supported("tr-TR") == "tr" and supported("de") is None


def test_the_page_and_the_worker_word_a_text_alike(app):
    text = say_n("{num} more case failed.", "{num} more cases failed.", num=2)
    late = say("Late work lost {percent} of its points.", percent=Percent(0.5))
    for language, tag in (("tr-TR,tr;q=0.9", "tr"), ("en-US,en", "en")):
        with app.test_request_context(headers={"Accept-Language": language}):
            assert [rendered(t) for t in (COMMENT, text, late)] == [
                worded(t, tag) for t in (COMMENT, text, late)
            ]
