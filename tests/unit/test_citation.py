"""CITATION.cff and LICENSE: the book's title and version, the papers it accompanies, the two
licences (code MIT, text and figures CC BY 4.0)."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf8"))


def test_title_and_version_are_the_books():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]
    meta = cff()
    assert meta["cff-version"] == "1.2.0"
    assert meta["title"] == config["title"]
    assert meta["version"] == project["version"]
    assert sorted(meta["license"]) == ["CC-BY-4.0", "MIT"]


def test_references_are_the_two_papers_of_references_bib():
    bib = (ROOT / "references.bib").read_text(encoding="utf8")
    for ref in cff()["references"]:
        title = ref["title"]
        assert title in bib, title
        entry = bib[bib.rindex("@", 0, bib.index(title)) :].split("\n}\n")[0]
        (arxiv,) = [i["value"] for i in ref["identifiers"]]
        assert f"eprint    = {{{arxiv.removeprefix('arXiv:')}}}" in entry
        assert str(ref["year"]) in entry and ref["url"] in entry
        for author in ref["authors"]:
            assert f"{author['family-names']}, {author['given-names']}" in entry


def test_licence_names_both_and_the_readme_and_footer_say_so():
    text = (ROOT / "LICENSE").read_text(encoding="utf8")
    assert "MIT License" in text and "Creative Commons Attribution 4.0" in text
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    assert re.search(r"MIT.*CC BY 4\.0|CC BY 4\.0.*MIT", readme, re.S)
    footer = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["html"]
    assert "CC BY 4.0" in footer["extra_footer"] and "MIT" in footer["extra_footer"]


def test_where_the_results_went_cites_ten_works_of_references_bib():
    """The epilogue's section on follow-up work cites at least ten works, each an entry of
    references.bib (verified before it was added: title, authors, year, venue or arXiv id)."""
    import re

    text = (ROOT / "chapters" / "epilogue.md").read_text(encoding="utf8")
    section = text.split("(epilogue-where)=", 1)[1].split("\n## ", 2)[1]
    keys = set(re.findall(r"\{cite:[tp]\}`([\w-]+)`", section))
    bib = set(re.findall(r"^@\w+\{([\w-]+),", (ROOT / "references.bib").read_text(), re.M))
    assert len(keys) >= 10 and keys <= bib, (sorted(keys), sorted(keys - bib))
