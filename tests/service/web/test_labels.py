"""The words of each status: one table per enum, every member worded, in both languages."""

import pytest

from core.lms_traps import CheckStatus
from core.placements import Reveal
from core.runs import RunStatus
from service.store.models import PracticeStatus, SubmissionStatus, SyncStatus
from service.web.labels import (
    case_label,
    check_statuses,
    practice_state,
    practice_statuses,
    reveals,
    run_statuses,
    status_label,
    submission_state,
    submission_statuses,
    sync_label,
    sync_statuses,
)

LANGUAGES = {"en": "en-US,en", "tr": "tr-TR,tr;q=0.9"}
TABLES = [
    (run_statuses, RunStatus),
    (submission_statuses, SubmissionStatus),
    (practice_statuses, PracticeStatus),
    (sync_statuses, SyncStatus),
    (reveals, Reveal),
    (check_statuses, CheckStatus),
]


@pytest.mark.parametrize(("table", "kind"), TABLES)
def test_every_member_of_each_enum_has_its_words(app, table, kind):
    """A status added to its enum and not to its table fails here, not on a page."""
    worded = {}
    for language, header in LANGUAGES.items():
        with app.test_request_context(headers={"Accept-Language": header}):
            words = table()
        assert sorted(words) == sorted(kind), language
        assert all(isinstance(word, str) and word for word in words.values()), language
        worded[language] = words
    untranslated = [m for m in kind if worded["tr"][m] == worded["en"][m]]
    assert untranslated == []


@pytest.mark.parametrize(
    ("label", "status", "english", "turkish"),
    [
        (status_label, RunStatus.TIMEOUT, "Time limit exceeded", "Süre sınırı aşıldı"),
        (status_label, "timeout", "Time limit exceeded", "Süre sınırı aşıldı"),  # as stored
        (status_label, "mystery", "mystery", "mystery"),  # no member: shown as it is
        (status_label, None, "", ""),
        (case_label, RunStatus.FAILED, "Failed", "Başarısız"),
        (case_label, "failed", "Failed", "Başarısız"),
        (case_label, RunStatus.ERROR, "Error", "Hata"),
        (submission_state, SubmissionStatus.QUEUED, "Queued…", "Sırada…"),
        (practice_state, "done", "Practice run done.", "Çalıştırma bitti."),
        (sync_label, SyncStatus.FAILED, "failed", "başarısız"),
        (sync_label, "sent", "sent", "gönderildi"),
    ],
)
def test_labels_follow_the_requests_language(app, label, status, english, turkish):
    for header, expected in ((LANGUAGES["en"], english), (LANGUAGES["tr"], turkish)):
        with app.test_request_context(headers={"Accept-Language": header}):
            assert label(status) == expected
