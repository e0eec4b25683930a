import random

import pytest

from core.code_changes import Changes, compare

EVERYTHING = 10**9  # context and shown lines that keep every line


def unified(changes: Changes) -> list[str]:
    """Return the diff as `diff -u` would mark its lines (hunk heads as @@ before after)."""
    marks = {"same": " ", "added": "+", "removed": "-"}
    lines = []
    for hunk in changes.hunks:
        lines.append(f"@@ {hunk.before} {hunk.after}")
        lines += [marks[line.change] + line.text for line in hunk.lines]
    return lines


def sides(changes: Changes) -> tuple[list[str], list[str]]:
    """Return the two versions as a whole diff spells them (context keeps every line)."""
    lines = [line for hunk in changes.hunks for line in hunk.lines]
    return (
        [line.text for line in lines if not line.added],
        [line.text for line in lines if not line.removed],
    )


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("a\nb\nc\n", "a\nB\nc\nd\n", ["@@ (1, 3) (1, 4)", " a", "-b", "+B", " c", "+d"]),
        ("", "x = 1\n", ["@@ (0, 0) (1, 1)", "+x = 1"]),
        ("x = 1\n", "", ["@@ (1, 1) (0, 0)", "-x = 1"]),
        # a blank line added among blank lines: one line, not a shuffle
        ("a\n\nb\n", "a\n\n\nb\n", ["@@ (1, 3) (1, 4)", " a", " ", "+", " b"]),
        # three lines of context each side; far-apart changes make two hunks
        (
            "".join(f"{n}\n" for n in range(20)),
            "".join(f"{ {2: 'two', 17: 'x'}.get(n, n) }\n" for n in range(20)),
            [
                "@@ (1, 6) (1, 6)",
                " 0",
                " 1",
                "-2",
                "+two",
                " 3",
                " 4",
                " 5",
                "@@ (15, 20) (15, 20)",
                " 14",
                " 15",
                " 16",
                "-17",
                "+x",
                " 18",
                " 19",
            ],
        ),  # fmt: skip
    ],
    ids=["changed-and-added", "from-nothing", "to-nothing", "blank-lines", "two-hunks"],
)
def test_a_diff_marks_each_line_with_its_numbers(before, after, expected):
    assert unified(compare(before, after)) == expected


def test_the_same_lines_make_no_hunk_even_without_the_last_newline():
    assert compare("x = 1\ny = 2\n", "x = 1\ny = 2").none
    assert compare("x = 1\ny = 2\n", "x = 1\ny = 2").hunks == ()
    changed = compare("x = 1\n", "x = 2\n")
    assert not changed.none and (changed.added, changed.removed) == (1, 1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("budget", [1_000_000, 50, 0])
def test_every_diff_spells_both_versions_whole(seed, budget):
    """Within the budget or past it, the diff's lines are the two versions, line by line."""
    rng = random.Random(seed)
    words = ["x = 1", "", "return y", "def f():", "    pass", f"print({seed})"]
    before = [rng.choice(words) + (str(i) if rng.random() < 0.3 else "") for i in range(200)]
    before.append("end")  # a last empty line would read as the text's last newline
    after = list(before)
    for _ in range(12):
        at = rng.randrange(len(after) - 1)
        if rng.random() < 0.5:
            after.insert(at, rng.choice(words))
        else:
            del after[at]
    changes = compare("\n".join(before), "\n".join(after), EVERYTHING, budget, EVERYTHING)
    assert sides(changes) == (before, after)
    assert changes.left_out == 0
    lines = [line for hunk in changes.hunks for line in hunk.lines]
    assert changes.added == sum(line.added for line in lines)
    assert changes.removed == sum(line.removed for line in lines)


def test_past_the_budget_a_middle_of_repeats_is_replaced_whole():
    # difflib's worst case: every line the same but the first and last; 1001 by 1001 pairs
    before = "x = 1\n" * 1000 + "end\n"
    after = "start\n" + "x = 1\n" * 1000
    changes = compare(before, after, EVERYTHING, shown=EVERYTHING)
    assert changes.rough
    assert (changes.added, changes.removed) == (1001, 1001)
    assert sides(changes) == (before.splitlines(), after.splitlines())
    # within the budget it is matched line by line: one removed, one added
    exact = compare(before, after, budget=2_000_000)
    assert not exact.rough and (exact.added, exact.removed) == (1, 1)


def test_past_the_budget_lines_found_once_still_split_a_long_middle():
    before = [f"value_{n} = {n}" for n in range(3000)]
    after = list(before)
    after[10], after[2990] = "changed = 10", "changed = 2990"
    # prefix and suffix leave a 2981-line middle (8.9 million pairs): the unique lines cut it
    changes = compare("\n".join(before), "\n".join(after), EVERYTHING, shown=EVERYTHING)
    assert not changes.rough
    assert (changes.added, changes.removed) == (2, 2)
    assert [line.text for line in changes.hunks[0].lines if line.added] == [
        "changed = 10", "changed = 2990"
    ]  # fmt: skip


def test_a_diff_keeps_at_most_the_lines_shown_and_counts_the_rest():
    before = "".join(f"old {n}\n" for n in range(600))
    after = "".join(f"new {n}\n" for n in range(600))
    changes = compare(before, after, shown=1000)
    assert sum(len(hunk.lines) for hunk in changes.hunks) == 1000
    assert changes.left_out == 200
    assert (changes.added, changes.removed) == (600, 600)  # counted whole
