"""lib.book.registry: the registry of checks (checks.toml), a record's status word, the tally."""

import re

import pytest

from lib.book import checks

from conftest import REGISTRY


def test_registry_reads_templates_kinds_and_variants(registry):
    reg = checks.registry()
    assert sorted(reg) == ["D1", "T1", "V.x", "V.y"]
    assert reg["D1"]["scale"] == ["exact", "sampled"] and reg["T1"]["scale"] == ["sampled"]
    assert reg["V.y"]["claim"] == "declines ({where})" and reg["V.y"]["id"] == "V.y"


@pytest.mark.parametrize(
    "edit, match",
    [
        (('kind = "demonstration"', 'kind = "proof"'), "kind must be one of"),
        (('basis = "definition"', 'basis = "paper"'), "basis of a demonstration"),
        (('threshold = "the statement"\n', ""), "a test names its threshold"),
        (('scale = "sampled"', 'scale = "fast"'), "scale must be among"),
        (('source = "book"', 'sauce = "book"'), "missing fields"),
        (('basis = "paper"', 'basis = "earlier run"'), "basis of a test"),
    ],
)
def test_registry_refuses_bad_entries(registry, edit, match):
    registry.write_text(REGISTRY.replace(*edit, 1), encoding="utf8")
    checks.registry.cache_clear()
    with pytest.raises(ValueError, match=match):
        checks.registry()


def test_status_and_tally_never_count_a_demonstration():
    entries = [
        {"kind": "test", "passed": True},
        {"kind": "test", "passed": False},
        {"kind": "test", "passed": None},
        {"kind": "test", "passed": True},
        {"kind": "demonstration", "passed": True},
        {"kind": "demonstration", "passed": True},
        {"kind": "demonstration", "passed": False},
    ]
    assert [checks.status(e) for e in entries] == [
        "pass",
        "FAIL",
        "not run",
        "pass",
        "shown",
        "shown",
        "FAIL",
    ]
    assert checks.tally(entries) == "4 tests: 2 pass, 1 fail, 1 not run · 3 demonstrations"
    assert checks.tally(entries[4:5]) == "0 tests: 0 pass, 0 fail, 0 not run · 1 demonstration"
    with pytest.raises(ValueError, match="kind"):
        checks.status({"kind": "proof", "passed": True})


def test_a_fast_proxy_contradicted_at_full_scale_is_not_a_pass():
    """C19.mnist passing on a fast subset while C19.full.mnist fails is "proxy contradicted",
    counted apart from the passes; on the full data, or with the counterpart passing or not
    recorded, the word is the record's own."""
    from lib.book import registry

    assert registry.registry()["C19.mnist"]["counterpart"] == "C19.full.mnist"
    assert "counterpart" not in registry.registry()["C19.cifar10"]  # no full-data check of it
    proxy = {"id": "C19.mnist", "kind": "test", "passed": True, "scale": "fast subset"}
    full = {"id": "C19.full.mnist", "kind": "test", "passed": False, "scale": "stored full data"}
    assert checks.status(proxy, full) == registry.CONTRADICTED
    assert checks.status(proxy, {**full, "passed": True}) == "pass"
    assert checks.status(proxy, {**full, "passed": None}) == "pass"
    assert checks.status({**proxy, "scale": "full data"}, full) == "pass"
    assert checks.status({**proxy, "passed": False}, full) == "FAIL"
    assert registry.counterpart_of(proxy, [proxy, full]) is full
    assert registry.counterpart_of(full, [proxy, full]) is None
    assert checks.tally([proxy, full]) == (
        "2 tests: 0 pass, 1 fail, 1 proxy contradicted at full scale, 0 not run · 0 demonstrations"
    )
    assert checks.tally([{**proxy, "scale": "full data"}, full]) == (
        "2 tests: 1 pass, 1 fail, 0 not run · 0 demonstrations"
    )


def test_the_books_registry_is_valid_and_honest():
    """lib/book/checks.toml: every test names where its threshold comes from, and no threshold comes
    from an earlier run; every section it names is a label of a chapter."""
    from pathlib import Path

    reg = checks.registry()
    assert {"C1", "C3", "B1.7", "C19.mnist", "C19.full.fashion-mnist"} <= set(reg)
    labels = set()
    for page in Path(__file__).resolve().parents[2].glob("chapters/*.md"):
        labels |= set(re.findall(r"^\(([\w-]+)\)=$", page.read_text(encoding="utf8"), re.M))
    for check_id, spec in reg.items():
        assert spec["section"] in labels, check_id
        assert "earlier run" not in spec.get("threshold", ""), check_id
        if spec["kind"] == "test":
            assert spec["threshold"].strip(), check_id
    assert all(kind in {"test", "demonstration"} for kind in (s["kind"] for s in reg.values()))
