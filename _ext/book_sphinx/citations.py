"""One citation style: the reference list labels its entries as the text cites them.

The text cites author–year (``bibtex_reference_style: author_year``: "Kajitsuka and Sato (2024)",
"[Liu et al., 2025]"); pybtex's bibliography styles label entries "[KS24]" (alpha) or "[1]" (plain),
a second style that the text never uses. The pybtex style registered here, ``book_author_year``
(``bibtex_default_style`` in ``_config.yml``), is pybtex's alpha style (same entry format and
author–year–title order) with labels in the text's own form: "Kajitsuka and Sato, 2024", "Liu et
al., 2025", with "a", "b" after the year when two entries would share a label.
"""

from __future__ import annotations

from collections import Counter

from pybtex.backends.plaintext import Backend as TextBackend
from pybtex.plugin import register_plugin
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.application import Sphinx

STYLE = "book_author_year"


#: pybtex's plain-text backend, made once: ``render_as("text")`` looks the backend up among the
#: installed packages' entry points on every call (about 12 ms each, 2.4 s of a 5 s rebuild).
_TEXT = TextBackend()


def _last_name(person) -> str:
    """A person's last name(s) as plain text (TeX braces and accents rendered by pybtex)."""
    return " ".join(part.render(_TEXT) for part in person.rich_last_names)


def author_year_label(entry) -> str:
    """The author–year label of a pybtex entry, as sphinxcontrib-bibtex's author_year cites it.

    One author: "Zhang, 2017"; two: "Kajitsuka and Sato, 2024"; three or more: "Liu et al., 2025";
    editors when there are no authors; "n.d." when the year is missing.

    Raises:
        ValueError: if ``entry`` has neither authors nor editors (the label would be empty).
    """
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    if not persons:
        raise ValueError(f"entry {entry.key!r} has no author or editor to label it with")
    names = [_last_name(p) for p in persons]
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabels(BaseLabelStyle):
    """pybtex label style: :func:`author_year_label`, made unique with a, b, ... after the year."""

    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        labels = [author_year_label(e) for e in entries]
        counts, seen = Counter(labels), Counter()
        for label in labels:
            if counts[label] > 1:
                yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label]]
                seen[label] += 1
            else:
                yield label


class AuthorYearStyle(AlphaStyle):
    """pybtex's alpha style with :class:`AuthorYearLabels`."""

    default_label_style = AuthorYearLabels


def setup(app: Sphinx) -> None:
    register_plugin("pybtex.style.formatting", STYLE, AuthorYearStyle)
