"""Reading lesson files and fields, with errors that name the file and the field at fault."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml

from core.compare import Tolerance
from core.errors import LessonError

MAX_FILE_BYTES = 64 * 1024


def text(
    path: Path, data: dict[str, Any], key: str, default: str | None = None, at: str = ""
) -> str:
    field = f"{at}.{key}" if at else key
    value = data.get(key, default)
    if value is None:
        raise LessonError(str(path), field, "is required")
    if not isinstance(value, str) or (default is None and not value.strip()):
        raise LessonError(str(path), field, "must be non-empty text")
    return value


def check_keys(
    path: Path, data: dict[str, Any], required: set[str], optional: set[str], at: str = ""
) -> None:
    prefix = f"{at}." if at else ""
    known = required | optional
    for key in sorted(map(str, data.keys() - known)):
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise LessonError(str(path), prefix + key, f"is not a known field{hint}")
    for key in sorted(required - data.keys()):
        raise LessonError(str(path), prefix + key, "is required")


def yaml_mapping(path: Path) -> dict[str, Any]:
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise LessonError(str(path), None, "must be a YAML mapping")
    return data


def load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        raise LessonError(str(path), None, f"is not valid YAML: {exc}") from exc
    except RecursionError:
        raise LessonError(str(path), None, "is nested too deeply to be read") from None
    except ValueError as exc:  # a constructor's: a date like 2001-02-30, an int of 5000 digits
        raise LessonError(str(path), None, f"holds a value YAML cannot read: {exc}") from None


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LessonError(str(path), None, "the file is missing") from None
    except OSError as exc:
        raise LessonError(str(path), None, f"cannot be read: {exc.strerror}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise LessonError(str(path), None, f"is larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LessonError(str(path), None, f"is not UTF-8 text (byte {exc.start})") from exc


def tolerance(path: Path, raw: object, at: str = "") -> Tolerance:
    field = f"{at}.tolerance" if at else "tolerance"
    if raw is None:
        return Tolerance()
    if not isinstance(raw, dict):
        raise LessonError(str(path), field, "must be a mapping {rel, abs}")
    check_keys(path, raw, required=set(), optional={"rel", "abs"}, at=field)
    values = {}
    for key in ("rel", "abs"):
        if key in raw:
            value = raw[key]
            if not isinstance(value, int | float) or isinstance(value, bool) or not value >= 0:
                raise LessonError(str(path), f"{field}.{key}", "must be a number >= 0")
            values[key] = float(value)
    return Tolerance(**values)
