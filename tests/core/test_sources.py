import pytest

from core.runs import MAX_SOURCE_BYTES
from core.sources import Fault, SourceRefused, check_source, check_text


@pytest.mark.parametrize(
    ("raw", "fault", "message"),
    [
        (
            b"x" * (MAX_SOURCE_BYTES + 1),
            Fault.TOO_LARGE,
            f"The code is larger than 64 KiB ({MAX_SOURCE_BYTES + 1} bytes).",
        ),
        (
            b"print(1)\n\xff",
            Fault.NOT_UTF8,
            "The code is not UTF-8 text (invalid byte at position 9).",
        ),
        (b"print(1)\x00", Fault.NUL_CHARACTER, "The code contains a NUL character."),
    ],
    ids=["too-large", "not-utf8", "nul"],
)
def test_a_source_that_may_not_run_is_refused_with_its_fault(raw, fault, message):
    with pytest.raises(SourceRefused) as refused:
        check_source(raw)
    assert (refused.value.fault, str(refused.value.words), str(refused.value)) == (
        fault,
        message,
        message,
    )


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"", ""),
        (b"print('\xc3\xa9')\n", "print('é')\n"),
        (b"x" * MAX_SOURCE_BYTES, "x" * MAX_SOURCE_BYTES),
    ],
    ids=["empty", "utf8", "at-the-limit"],
)
def test_a_source_that_may_run_is_its_text(raw, text):
    assert check_source(raw) == text


@pytest.mark.parametrize(
    ("text", "fault"),
    [("print('\ud800')", Fault.NOT_UTF8), ("é" * (MAX_SOURCE_BYTES // 2 + 1), Fault.TOO_LARGE)],
    ids=["lone-surrogate", "too-large-in-bytes"],
)
def test_a_text_is_checked_as_its_utf8_bytes(text, fault):
    with pytest.raises(SourceRefused) as refused:
        check_text(text)
    assert refused.value.fault is fault
