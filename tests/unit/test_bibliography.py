"""references.bib carries every public identifier its works have, so the reference list links them.

``IDENTIFIERS`` records, for every entry, the arXiv id, DOI and OpenReview forum id found when the
entry was checked (by searching arXiv, OpenReview, the publishers' pages and PMLR; none from
memory), or why a work has none. A new entry needs its row here, and an entry that lacks an
identifier its row records fails. The built reference list is checked for the links in
``tests/book/test_site.py``.
"""

from __future__ import annotations

import pytest
from pybtex.database import parse_file

from conftest import ROOT

#: key -> (arXiv id, DOI, OpenReview forum id); None where the search found none.
IDENTIFIERS: dict[str, tuple[str | None, str | None, str | None]] = {
    "kajitsuka2024": ("2307.14023", None, "nJnky5K944"),
    "liu2025": ("2504.19901", None, "NTjr79xpX0"),
    "yun2020": ("1912.10077", None, None),
    "kim2023": (None, None, "8JCg5xJCTPR"),  # no arXiv version found
    "kajitsuka2025": ("2409.17677", None, None),
    "park2021": ("2010.13363", None, None),
    "zhang2017": ("1611.03530", None, None),
    "asadi2017": ("1612.05628", None, None),
    "vaswani2017": ("1706.03762", None, None),
    "hu2026": ("2504.15956", None, None),
    "tjongkimsang2003": ("cs/0306050", None, None),
    "lample2016": ("1603.01360", None, None),
    "mahdavi2024": ("2306.02010", None, "MrR3rMxqqv"),
    "madden2024": ("2405.13718", None, None),
    "bhojanapalli2020": ("2002.07028", None, None),
    "amsel2024": ("2407.16153", None, None),
    "jiang2024": ("2305.18475", None, "ZwS2y21mZV"),
    "takakura2023": ("2305.18699", None, None),
    "petrov2024": ("2402.14753", None, None),
    "hu2025prompt": ("2411.16525", None, None),
    "furuya2025": ("2408.01367", None, None),
    "merrill2022": ("2106.16213", "10.1162/tacl_a_00493", None),
    "merrill2023": ("2207.00729", "10.1162/tacl_a_00562", None),
    "chiang2023": ("2301.10743", None, "XKcogevHj8"),
    "devore1989": (None, "10.1007/BF01171759", None),
    # JMLR assigns no DOIs, and this title has no arXiv version (arXiv 1901.03429 is the earlier
    # ICLR 2019 paper, "On the Turing Completeness of Modern Neural Network Architectures").
    "perez2021": (None, None, None),
    # A 1959 journal article in Russian: no DOI, arXiv or OpenReview record was found.
    "kolmogorov1959": (None, None, None),
}


#: key -> web address, for the secondary sources that are web pages with no other identifier (the
#: AI-written summaries and the reproducibility survey of the Sources page), each found by a search
#: that showed the page's opening part.
WEB_PAGES: dict[str, str] = {
    "sciencestack2307": "https://www.sciencestack.ai/paper/2307.14023",
    "liner2307": (
        "https://liner.com/review/"
        "are-transformers-with-one-layer-selfattention-using-lowrank-weight-matrices"
    ),
    "moonlight2504es": (
        "https://www.themoonlight.io/es/review/"
        "attention-mechanism-max-affine-partition-and-universal-approximation"
    ),
    "moonlight2504ja": (
        "https://www.themoonlight.io/ja/review/"
        "attention-mechanism-max-affine-partition-and-universal-approximation"
    ),
    "emergentmind2504": "https://www.emergentmind.com/papers/2504.19901",
    "k117survey2504": (
        "https://ri.k117.org/papers/"
        "attention_mechanism_maxaffine_partition_and_universal_approximation__6e8b61b5"
    ),
}


def entries() -> dict:
    return parse_file(str(ROOT / "references.bib")).entries


def test_every_entry_has_its_searched_identifiers_recorded():
    assert sorted(entries()) == sorted(IDENTIFIERS | WEB_PAGES)


@pytest.mark.parametrize("key", sorted(WEB_PAGES))
def test_a_web_page_carries_its_address_and_no_other_identifier(key):
    fields = entries()[key].fields
    assert fields.get("url") == WEB_PAGES[key], key
    assert not {"eprint", "doi"} & set(fields), key
    assert "$" not in fields["title"], key


@pytest.mark.parametrize("key", sorted(IDENTIFIERS))
def test_an_entry_carries_every_identifier_its_work_has(key):
    fields = entries()[key].fields
    arxiv, doi, openreview = IDENTIFIERS[key]
    if arxiv:  # pybtex's styles link an eprint to arxiv.org/abs/<id>; a note would be plain text
        assert fields.get("eprint") == arxiv and fields.get("archiveprefix") == "arXiv", key
    else:
        assert "eprint" not in fields, key
    assert fields.get("doi") == doi, key
    if openreview:
        assert fields.get("url") == f"https://openreview.net/forum?id={openreview}", key
    assert "arXiv:" not in fields.get("note", ""), key  # an id in a note is not linked
    assert "$" not in fields["title"], key  # TeX in a title shows raw on the site


def test_linked_identifiers_cover_every_entry_but_the_two_without_any():
    without = {key for key, ids in IDENTIFIERS.items() if not any(ids)}
    assert without == {"perez2021", "kolmogorov1959"}
