""""Did you mean": the known name a misspelt one most plausibly was.

A suggestion is worth showing only when it is a likely typo, so the measure is an edit
distance (not difflib's similarity ratio, which found `rotate` for `take` and `round` for
`cond`): the Damerau–Levenshtein distance, in its optimal-string-alignment form (insert,
delete, substitute, or swap two adjacent characters), at most 1 for a name of three or four
characters and at most 2 for a longer one; a name of one or two characters is one edit from
too many others (`x` from `*`) to suggest anything (spec/decisions.md D34).
"""

from __future__ import annotations

from typing import Iterable, Optional


def edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: ``lenght``→``length`` is 1 (one swap)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[len(b)]


def max_typos(name: str) -> int:
    """How many edits a suggestion for ``name`` may be away: the shorter the name, the more
    unrelated names are that close to it."""
    return 0 if len(name) <= 2 else 1 if len(name) <= 4 else 2


def did_you_mean(name: str, candidates: Iterable[str]) -> Optional[str]:
    """The nearest candidate within :func:`max_typos` edits (ties: the first in alphabetical
    order), or None."""
    limit = max_typos(name)
    best: Optional[tuple[int, str]] = None
    for c in set(candidates):
        if c == name or abs(len(c) - len(name)) > limit:
            continue
        d = edit_distance(name, c)
        if d <= limit and (best is None or (d, c) < best):
            best = (d, c)
    return best[1] if best else None
