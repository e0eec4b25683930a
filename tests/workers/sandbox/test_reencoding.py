"""The host's re-encoding of a run's figures: fresh PNGs of the pixels alone, or a reason."""

import io

import pytest
from PIL import Image, PngImagePlugin

from core.figures import MAX_FIGURES, Dropped, DropReason, Figure
from tests.workers.sandbox import pngs
from workers.sandbox.reencoding import checked, reencode


def pillow_png(mode: str = "RGB", size=(32, 16), **save) -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "red" if mode != "P" else 3).save(out, format="PNG", **save)
    return out.getvalue()


def with_text(**entries: str) -> bytes:
    info = PngImagePlugin.PngInfo()
    for key, value in entries.items():
        info.add_text(key, value, zip=key == "Comment")
    return pillow_png(pnginfo=info, icc_profile=b"\0" * 200, exif=b"Exif\0\0MM\0*")


def test_a_figure_is_written_anew_with_nothing_of_the_file_but_its_pixels():
    original = with_text(Description="Dikkat ağırlıkları", Comment="<script>x</script>")
    assert {b"tEXt", b"iTXt", b"zTXt", b"iCCP", b"eXIf"} & set(pngs.chunk_types(original))
    figure = reencode(original)
    assert isinstance(figure, Figure)
    assert (figure.width, figure.height, figure.alt) == (32, 16, "Dikkat ağırlıkları")
    assert set(pngs.chunk_types(figure.png)) == {b"IHDR", b"IDAT", b"IEND"}
    with Image.open(io.BytesIO(figure.png)) as image:
        assert image.convert("RGB").getpixel((5, 5)) == (255, 0, 0)


def test_the_text_alternative_is_one_bounded_line_of_printable_text():
    figure = reencode(with_text(Title="a\x00b\n\tc " + "d" * 1000))
    assert isinstance(figure, Figure)
    assert figure.alt.startswith("a b c ddd") and len(figure.alt) == 300


@pytest.mark.parametrize("mode", ["RGBA", "LA", "L", "P", "1"])
def test_every_png_mode_comes_out_rgb_or_rgba(mode):
    figure = reencode(pillow_png(mode))
    assert isinstance(figure, Figure)
    with Image.open(io.BytesIO(figure.png)) as image:
        assert image.mode == ("RGBA" if mode in ("RGBA", "LA") else "RGB")


def test_what_claims_too_many_pixels_is_refused_before_pillow_reads_it(monkeypatch):
    def no(*args, **kwargs):
        raise AssertionError("Pillow was asked to open it")

    monkeypatch.setattr(Image, "open", no)
    assert reencode(pngs.png(100_000, 100_000, rows=b"\0")) is DropReason.TOO_MANY_PIXELS
    assert reencode(pngs.png(5000, 2, rows=b"\0")) is DropReason.TOO_MANY_PIXELS  # a side
    assert reencode(pngs.bomb(3000)) is DropReason.TOO_MANY_PIXELS  # 9 MP from 30 KB


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"GIF89a" + b"\0" * 40,
        pngs.png(8, 8)[:45],  # cut short in its pixels
        pngs.png(8, 8, rows=b"\0" * 10),  # too few pixels for its header
        pngs.png(8, 8)[:8] + b"\0" * 40,  # a signature, then no header
        pngs.SIGNATURE + pngs.chunk(b"IHDR", b"\0" * 13),  # zero by zero
    ],
    ids=["empty", "gif", "truncated", "short", "no-header", "zero-size"],
)
def test_what_is_no_readable_png_is_refused(data):
    assert reencode(data) is DropReason.NOT_PNG


def test_a_jpeg_named_png_is_refused():
    out = io.BytesIO()
    Image.new("RGB", (8, 8)).save(out, format="JPEG")
    assert reencode(out.getvalue()) is DropReason.NOT_PNG


def test_an_animated_png_is_refused():
    out = io.BytesIO()
    frames = [Image.new("RGB", (8, 8), color) for color in ("red", "green", "blue")]
    frames[0].save(out, format="PNG", save_all=True, append_images=frames[1:])
    assert pngs.chunk_types(out.getvalue()).count(b"fdAT") == 2
    assert reencode(out.getvalue()) is DropReason.NOT_PNG


def test_a_text_chunk_that_inflates_too_far_is_refused():
    import zlib

    bomb = pngs.chunk(b"zTXt", b"Description\0\0" + zlib.compress(b"a" * 5_000_000, 9))
    assert reencode(pngs.png(8, 8, extra=(bomb,))) is DropReason.NOT_PNG


def test_a_file_larger_than_the_bound_is_refused_unread():
    assert reencode(pngs.png(8, 8) + b"\0" * (1024 * 1024)) is DropReason.TOO_LARGE


def test_checked_keeps_four_and_says_why_it_dropped_the_rest():
    good = [(f"f{n}.png", pillow_png(size=(n + 1, 1))) for n in range(6)]
    figures, dropped = checked([("bad.png", b"nope"), *good], [("x\x07" + "y" * 100, "odd")])
    assert [f.width for f in figures] == [1, 2, 3, 4][:MAX_FIGURES]
    assert dropped[0] == Dropped("x?" + "y" * 57 + "…", DropReason.NOT_PNG)  # named, bounded
    assert dropped[1:] == (
        Dropped("bad.png", DropReason.NOT_PNG),
        Dropped("f4.png", DropReason.TOO_MANY),
        Dropped("f5.png", DropReason.TOO_MANY),
    )
