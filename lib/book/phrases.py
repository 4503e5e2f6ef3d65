"""The words a chapter chooses between, kept as data beside its prose, not built in Python.

A sentence whose wording depends on a computed outcome ("the error *falls* with the grid" or
"*does not fall*") is written in the chapter's phrase table, ``phrases/<chapter>.toml`` beside
this module, one entry per glued name. The chapter's cell computes only *which case* holds and
glues the phrase of that case::

    say = phrases("03_memorization")
    say.glue("exm_dig_grows", grows)          # exm_dig_grows = ["grows", "does not always grow"]
    say.glue("depth_order", "later", k=3)     # depth_order = {later = "later at {k} layers", ...}

An entry is a pair ``[if it holds, if it does not]`` chosen by a bool, a table of named cases
chosen by a key, or one phrase (no case). A phrase may hold ``str.format`` fields (``{k}``,
``{err:.2f}``), filled from the keyword arguments, so that numbers still come from the
computation. A reader of the
source finds every word the page can say in the table, and the cell says which case applies.

A list of phrases, one per case, is :meth:`Phrases.join` (``"3 of 8 label-flip curves and 1 of
8 pixel-noise curves"``), and :func:`count_case` names the case of a count of ``n``
(``"every"``, ``"none"`` or ``"some"``)::

    say.join("c19_curves", {"label": {"k": 3, "n": 8}, "input": {"k": 1, "n": 8}})
    say("in_experiments", count_case(k, n), k=k, n=n)
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from .prose import glue, joined

__all__ = ["Phrases", "phrases", "count_case", "PHRASES_DIR"]

#: The folder of the phrase tables, one ``<chapter>.toml`` per chapter (package data of lib.book).
#:
#: :meta hide-value:
PHRASES_DIR = Path(__file__).with_name("phrases")


class Phrases:
    """One chapter's phrase table (:func:`phrases` builds it).

    Args:
        chapter: the chapter's file stem, e.g. ``"03_memorization"``.
        table: its entries, name -> ``[if true, if false]``, ``{case: phrase}`` or one phrase.
    """

    def __init__(self, chapter: str, table: dict[str, Any]) -> None:
        for name, entry in table.items():
            if isinstance(entry, str):
                continue
            pair = isinstance(entry, list) and len(entry) == 2
            cases = isinstance(entry, dict) and entry
            if not (pair or cases) or not all(
                isinstance(p, str) for p in (entry if pair else entry.values())
            ):
                raise ValueError(
                    f"phrase {name!r} of {chapter} must be [if it holds, if it does not], a "
                    f"table of named cases or one phrase, each a string; got {entry!r}"
                )
        self.chapter = chapter
        self.table = table

    def __call__(self, name: str, case: bool | str | None = None, /, **fields: Any) -> str:
        """The phrase ``name`` for ``case`` (none for a single phrase), its ``{fields}`` filled.

        Raises:
            ValueError: for a name the table lacks, a case of the wrong kind (a bool for a pair,
                a key of the table for named cases, none for one phrase) or a field the phrase
                names but the call does not give.
        """
        if name not in self.table:
            raise ValueError(f"name {name!r} is not in the phrase table of {self.chapter}")
        entry = self.table[name]
        if isinstance(entry, str):
            if case is not None:
                raise ValueError(f"phrase {name!r} has one case; got case {case!r}")
            text = entry
        elif isinstance(entry, list):
            if not isinstance(case, bool):
                raise ValueError(f"case of {name!r} must be True or False, got {case!r}")
            text = entry[0] if case else entry[1]
        else:
            if case not in entry:
                raise ValueError(f"case of {name!r} must be one of {sorted(entry)}, got {case!r}")
            text = entry[case]
        try:
            return text.format(**fields)
        except KeyError as e:
            raise ValueError(f"phrase {name!r} needs the field {e.args[0]!r}") from None

    def glue(self, name: str, case: bool | str | None = None, /, **fields: Any) -> None:
        """Glue the phrase ``name`` for ``case`` under ``name`` (:func:`lib.book.prose.glue`)."""
        glue(name, self(name, case, **fields))

    def join(self, name: str, cases: Mapping[Any, Mapping[str, Any]], /) -> str:
        """The phrase ``name`` for each case of ``cases``, each with its own fields, listed as
        prose lists them (:func:`lib.book.prose.joined`: ``"a"``, ``"a and b"``, ``"a, b and
        c"``), in the order of ``cases``.

        Args:
            name: a phrase of the table.
            cases: case -> fields, e.g. ``{"label": {"k": 3, "n": 8}, "input": {"k": 1,
                "n": 8}}``, at least one.

        Raises:
            ValueError: for no case, fields that are not a mapping, and as calling the table
                (``__call__``).
        """
        if not isinstance(cases, Mapping) or not cases:
            raise ValueError(f"cases of {name!r} must be a non-empty mapping, got {cases!r}")
        parts = []
        for case, fields in cases.items():
            if not isinstance(fields, Mapping):
                raise ValueError(f"fields of case {case!r} of {name!r} must be a mapping")
            parts.append(self(name, case, **fields))
        return joined(parts)


@cache
def _load(chapter: str) -> dict[str, Any]:
    path = PHRASES_DIR / f"{chapter}.toml"
    if not path.is_file():
        raise ValueError(f"chapter {chapter!r} has no phrase table ({path.name} in {PHRASES_DIR})")
    with path.open("rb") as f:
        return tomllib.load(f)


def phrases(chapter: str) -> Phrases:
    """The phrase table of ``chapter`` (``phrases/<chapter>.toml`` beside this module).

    Raises:
        ValueError: for a chapter without a table, or an entry that is neither a pair of
            strings nor a table of strings.
    """
    if not isinstance(chapter, str):
        raise ValueError(f"chapter must be a chapter's file stem, got {chapter!r}")
    return Phrases(chapter, _load(chapter))


def count_case(k: int, n: int) -> str:
    """The case of ``k`` out of ``n``: ``"every"`` when ``k == n``, ``"none"`` when ``k == 0``
    (and ``n > 0``), otherwise ``"some"``: for a phrase table entry with those three cases.

    Raises:
        ValueError: unless ``0 <= k <= n`` are integers (bools refused).
    """
    if any(isinstance(v, bool) or not isinstance(v, int | np.integer) for v in (k, n)) or not (
        0 <= k <= n
    ):
        raise ValueError(f"k and n must be integers with 0 <= k <= n, got k={k!r}, n={n!r}")
    return "every" if k == n else "none" if k == 0 else "some"
