"""What changed from one version of a student's code to the next: a line diff, bounded.

difflib's matcher compares each line of one side with the lines of the other that are the
same, so its cost grows with the product of the two sides' lengths when lines repeat: two
middles of 1000 lines of `x = 1` took 0.1 s here, of 4000 lines 1.5 s, and a source may
be 64 KiB (30,000 short lines). So the diff is bounded:

1. the first and last lines both versions share are set aside, in linear time (most edits
   between two attempts are local, and leave a short middle);
2. a middle of at most MATCHED_PAIRS line pairs (its lengths' product) goes to difflib;
3. a larger middle is cut at the lines found exactly once on each side, in the order both
   keep (a patience diff's anchors: linear, plus a sort); each piece between two anchors
   goes to difflib while the pairs matched so far stay within MATCHED_PAIRS;
4. a piece past that budget is shown as replaced whole, its old lines removed and its new
   ones added: still a true account of the change, only not the smallest, and `rough`
   says so.

At most SHOWN_LINES lines are kept for showing (the counts are of every line).
"""

from __future__ import annotations

import enum
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

MATCHED_PAIRS = 1_000_000  # about 0.1 s of difflib at its worst here (1000 by 1000 repeats)
SHOWN_LINES = 1000  # lines of a diff kept for a page: a whole 64 KiB source is ~2000
CONTEXT = 3  # unchanged lines shown around a change, as `diff -u` does


class LineChange(enum.StrEnum):
    """What happened to a line from one version to the next."""

    SAME = "same"
    ADDED = "added"
    REMOVED = "removed"


@dataclass(frozen=True)
class Line:
    """One line of a diff: what happened to it, its numbers before and after (from 1)."""

    change: LineChange
    before: int | None  # None: an added line
    after: int | None  # None: a removed line
    text: str

    @property
    def added(self) -> bool:
        """Return whether the line is new in the later version."""
        return self.change is LineChange.ADDED

    @property
    def removed(self) -> bool:
        """Return whether the line is gone from the later version."""
        return self.change is LineChange.REMOVED


@dataclass(frozen=True)
class Hunk:
    """A run of changed lines with the unchanged lines around them."""

    lines: tuple[Line, ...]

    @property
    def before(self) -> tuple[int, int]:
        """Return the first and last line numbers it covers in the earlier version (0, 0: none)."""
        return _span([line.before for line in self.lines])

    @property
    def after(self) -> tuple[int, int]:
        """Return the first and last line numbers it covers in the later version (0, 0: none)."""
        return _span([line.after for line in self.lines])


@dataclass(frozen=True)
class Changes:
    """The change from one version to the next, as hunks of lines, with its counts."""

    hunks: tuple[Hunk, ...]
    added: int  # lines added, all of them (shown or not)
    removed: int
    rough: bool  # some part was too large to match line by line: shown as replaced whole
    left_out: int  # lines of the hunks not kept for showing (past SHOWN_LINES)

    @property
    def none(self) -> bool:
        """Return whether the two versions have the same lines (a last newline aside)."""
        return self.added == 0 and self.removed == 0


# an edit as difflib's opcodes say it: (tag, before from, before to, after from, after to)
Op = tuple[str, int, int, int, int]
_EQUAL, _REPLACE, _DELETE, _INSERT = "equal", "replace", "delete", "insert"


def compare(
    before: str,
    after: str,
    context: int = CONTEXT,
    budget: int = MATCHED_PAIRS,
    shown: int = SHOWN_LINES,
) -> Changes:
    """Return the lines that changed from `before` to `after`, within the bounds above."""
    old, new = _lines(before), _lines(after)
    ops, rough = _ops(old, new, budget)
    added = sum(j2 - j1 for tag, _i1, _i2, j1, j2 in ops if tag != _EQUAL)
    removed = sum(i2 - i1 for tag, i1, i2, _j1, _j2 in ops if tag != _EQUAL)
    hunks: list[Hunk] = []
    kept = left_out = 0
    for group in _grouped(ops, context):
        lines = [line for op in group for line in _lines_of(op, old, new)]
        room = max(shown - kept, 0)
        if lines[:room]:
            hunks.append(Hunk(tuple(lines[:room])))
        kept += min(len(lines), room)
        left_out += max(len(lines) - room, 0)
    return Changes(tuple(hunks), added, removed, rough, left_out)


def _lines(text: str) -> list[str]:
    """Return a text's lines; a last newline ends the last line and starts none."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _ops(old: list[str], new: list[str], budget: int) -> tuple[list[Op], bool]:
    """Return the edits from `old` to `new`, and whether a part was replaced whole."""
    head = 0
    most = min(len(old), len(new))
    while head < most and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < most - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle, rough = _middle(old[head : len(old) - tail], new[head : len(new) - tail], budget)
    ops: list[Op] = []
    if head:
        ops.append((_EQUAL, 0, head, 0, head))
    ops += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle]
    if tail:
        ops.append((_EQUAL, len(old) - tail, len(old), len(new) - tail, len(new)))
    return _merged(ops), rough


def _middle(old: list[str], new: list[str], budget: int) -> tuple[list[Op], bool]:
    if len(old) * len(new) <= budget:
        return _matched(old, new), False
    ops: list[Op] = []
    rough = False
    left = budget
    i = j = 0
    for anchor_i, anchor_j in [*_anchors(old, new), (len(old), len(new))]:
        piece_old, piece_new = old[i:anchor_i], new[j:anchor_j]
        pairs = len(piece_old) * len(piece_new)
        if pairs <= left:
            found = _matched(piece_old, piece_new)
            left -= pairs
        else:
            found = [(_REPLACE, 0, len(piece_old), 0, len(piece_new))]
            rough = True
        ops += [(tag, i1 + i, i2 + i, j1 + j, j2 + j) for tag, i1, i2, j1, j2 in found]
        if anchor_i < len(old):
            ops.append((_EQUAL, anchor_i, anchor_i + 1, anchor_j, anchor_j + 1))
        i, j = anchor_i + 1, anchor_j + 1
    return ops, rough


def _matched(old: list[str], new: list[str]) -> list[Op]:
    if not old and not new:
        return []
    if not old or not new:
        return [(_INSERT if new else _DELETE, 0, len(old), 0, len(new))]
    # autojunk would call a line popular in a long file (a blank line) junk: the sizes are
    # bounded already, and a diff of code reads better with its blank lines matched
    return list[Op](SequenceMatcher(None, old, new, autojunk=False).get_opcodes())


def _anchors(old: list[str], new: list[str]) -> list[tuple[int, int]]:
    """Return the (i, j) of lines found once in each, the longest run in the order both keep."""
    in_old, in_new = Counter(old), Counter(new)
    where = {line: j for j, line in enumerate(new) if in_new[line] == 1}
    pairs = [(i, where[line]) for i, line in enumerate(old) if in_old[line] == 1 and line in where]
    # the longest increasing run of j over i (patience sorting), with a link to each's previous
    tops: list[int] = []  # the smallest j ending a run of each length
    ends: list[int] = []  # the index in `pairs` of that run's last pair
    links: list[int] = []
    for index, (_i, j) in enumerate(pairs):
        length = bisect_left(tops, j)
        links.append(ends[length - 1] if length else -1)
        if length == len(tops):
            tops.append(j)
            ends.append(index)
        else:
            tops[length], ends[length] = j, index
    run: list[tuple[int, int]] = []
    at = ends[-1] if ends else -1
    while at >= 0:
        run.append(pairs[at])
        at = links[at]
    return run[::-1]


def _merged(ops: list[Op]) -> list[Op]:
    """Return the edits with neighbouring unchanged runs joined, and empty ones dropped."""
    merged: list[Op] = []
    for op in ops:
        tag, i1, i2, j1, j2 = op
        if i1 == i2 and j1 == j2:
            continue
        if merged and tag == _EQUAL and merged[-1][0] == _EQUAL:
            merged[-1] = (_EQUAL, merged[-1][1], i2, merged[-1][3], j2)
        else:
            merged.append(op)
    return merged


def _grouped(ops: Sequence[Op], context: int) -> list[list[Op]]:
    """Return the edits in groups of changes, each with `context` unchanged lines around."""
    if not any(tag != _EQUAL for tag, *_ in ops):
        return []
    ops = list(ops)
    tag, i1, i2, j1, j2 = ops[0]
    if tag == _EQUAL:
        ops[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    tag, i1, i2, j1, j2 = ops[-1]
    if tag == _EQUAL:
        ops[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    groups: list[list[Op]] = []
    group: list[Op] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == _EQUAL and i2 - i1 > 2 * context and group:
            group.append((tag, i1, i1 + context, j1, j1 + context))
            groups.append(group)
            group = []
            i1, j1 = i2 - context, j2 - context
        group.append((tag, i1, i2, j1, j2))
    if group:
        groups.append(group)
    return groups


def _lines_of(op: Op, old: list[str], new: list[str]) -> list[Line]:
    tag, i1, i2, j1, j2 = op
    if tag == _EQUAL:
        return [
            Line(LineChange.SAME, i + 1, j + 1, old[i])
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
        ]
    gone = [Line(LineChange.REMOVED, i + 1, None, old[i]) for i in range(i1, i2)]
    return gone + [Line(LineChange.ADDED, None, j + 1, new[j]) for j in range(j1, j2)]


def _span(numbers: list[int | None]) -> tuple[int, int]:
    found = [number for number in numbers if number is not None]
    return (min(found), max(found)) if found else (0, 0)
