"""The registry of the book's checks (``checks.toml``) and the status word of a record.

Standard library only: the book's Sphinx extension reads the registry to build the claims page
and must not load torch (a rebuild with nothing changed stays within its budget of a few seconds).
:mod:`lib.book.checks` re-exports every name here; chapters import them from there.

Used by ``chapters/claims.md`` (through the extension) and by :mod:`lib.book.checks`.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "BASES",
    "CONTRADICTED",
    "KINDS",
    "REGISTRY_FILE",
    "SCALES",
    "counterpart_of",
    "registry",
    "status",
    "tally",
]

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")

#: At which scale a check ran, shown on the claims page.
SCALES = {
    "exact": (
        "a computation on constructed inputs, in exact or float arithmetic; no dataset, no sampling"
    ),
    "sampled": "random inputs or draws, seeded; no dataset",
    "fast subset": (
        "a subset of a dataset, trained live in the book's fast mode: a proxy of the paper's run"
    ),
    "full data": "the whole dataset, trained live",
    "stored subset": (
        "a seeded subset of a dataset at the book's settings for it, computed by make full and "
        "stored with its provenance"
    ),
    "stored sampled": (
        "random draws, seeded, no dataset, at the book's full-mode settings, computed by make full "
        "and stored with its provenance"
    ),
    "stored full data": (
        "the whole dataset at the book's full-mode settings, computed by make full and stored with "
        "its provenance"
    ),
}

#: The two kinds of check. Only tests count as support for a statement.
KINDS = {
    "test": (
        "could fail if the statement were false: an independent measurement against a threshold "
        "fixed by the statement or a derivation before the run"
    ),
    "demonstration": (
        "true by definition, construction or arithmetic once the code is right: worth showing, "
        "never counted as support"
    ),
}

#: What a check's "expected" value is, by kind.
BASES = {
    "paper": (
        "test",
        "the paper's own statement or number (as the sources give it; see Sources and certainty)",
    ),
    "reconstruction": (
        "test",
        "the book's reconstruction of a statement whose exact form the sources do not give",
    ),
    "derivation": ("test", "a closed form or bound the book derives on the page"),
    "recount": ("test", "the same quantity computed a second, independent way: a test of the code"),
    "definition": ("demonstration", "a property that holds by definition or by the construction"),
    "construction": ("demonstration", "a rate or value built into the construction"),
    "arithmetic": (
        "demonstration",
        "a consequence of floating-point arithmetic, certain in advance",
    ),
    "observation": (
        "demonstration",
        "a measured behaviour the book shows but derives no threshold for",
    ),
}

#: The registry of checks, each check's fixed text once (TOML), read by :func:`registry`, in the
#: file ``checks.toml`` beside this module.
#:
#: :meta hide-value:
REGISTRY_FILE = Path(__file__).with_name("checks.toml")


_REQUIRED = ("section", "kind", "basis", "scale", "claim", "expected", "why", "source")
_OPTIONAL = ("threshold", "verdict", "variants", "counterpart")


@functools.cache
def registry() -> dict[str, dict]:
    """Every registered check, by id, as :data:`REGISTRY_FILE` defines it (validated).

    An entry with ``variants = ["a", "b"]`` registers the ids ``<id>.a`` and ``<id>.b`` with the
    same text (C19.mnist, C19.fashion-mnist). Each entry holds ``section`` (the label of the
    section that computes it), ``kind`` (:data:`KINDS`), ``basis`` (:data:`BASES`, of that kind),
    ``scale`` (a key of :data:`SCALES`, or a list of those the chapter chooses from), ``claim``
    and ``expected`` (templates filled by :func:`~lib.book.checks.record`'s fields), ``why``
    (why it is a test or a demonstration), ``threshold`` (tests only: where the threshold comes
    from), ``source`` and ``verdict`` (optional: the prose if it holds, if not; templates too),
    and ``counterpart`` (optional: the id of the same test on the full data, ``{variant}`` filled
    with the variant, for a test a chapter runs on a fast subset: :func:`status`).

    Raises:
        ValueError: naming the entry and the field, for a missing or unknown field, an unknown
            kind, basis or scale, a basis of the other kind, or a test without a threshold.
    """
    with REGISTRY_FILE.open("rb") as handle:
        raw = tomllib.load(handle)
    out: dict[str, dict] = {}
    for key, entry in raw.items():
        where = f"{REGISTRY_FILE.name} [{key}]"
        if not _KEY.fullmatch(key):
            raise ValueError(f"{where}: the id must match {_KEY.pattern}")
        missing = [f for f in _REQUIRED if f not in entry]
        unknown = [f for f in entry if f not in _REQUIRED + _OPTIONAL]
        if missing or unknown:
            raise ValueError(f"{where}: missing fields {missing}, unknown fields {unknown}")
        if entry["kind"] not in KINDS:
            raise ValueError(f"{where}: kind must be one of {sorted(KINDS)}, got {entry['kind']!r}")
        if entry["basis"] not in BASES or BASES[entry["basis"]][0] != entry["kind"]:
            allowed = sorted(b for b, (k, _) in BASES.items() if k == entry["kind"])
            raise ValueError(f"{where}: basis of a {entry['kind']} must be one of {allowed}")
        scales = [entry["scale"]] if isinstance(entry["scale"], str) else list(entry["scale"])
        if not scales or any(s not in SCALES for s in scales):
            raise ValueError(
                f"{where}: scale must be among {sorted(SCALES)}, got {entry['scale']!r}"
            )
        if (entry["kind"] == "test") != bool(entry.get("threshold", "").strip()):
            raise ValueError(f"{where}: a test names its threshold's source, a demonstration none")
        verdict = entry.get("verdict")
        if verdict is not None and (
            len(verdict) != 2 or not all(isinstance(v, str) and v.strip() for v in verdict)
        ):
            raise ValueError(f"{where}: verdict must be two non-empty strings (holds, fails)")
        fixed = {k: v for k, v in entry.items() if k != "variants"} | {"scale": scales}
        for variant in entry.get("variants", [None]):
            check_id = key if variant is None else f"{key}.{variant}"
            out[check_id] = fixed | {"id": check_id}
            if "counterpart" in entry:
                out[check_id]["counterpart"] = entry["counterpart"].replace(
                    "{variant}", variant or ""
                )
    for key, entry in raw.items():  # a variant without a full-data check has no counterpart
        ids = [key] if "variants" not in entry else [f"{key}.{v}" for v in entry["variants"]]
        if "counterpart" in entry:
            for check_id in ids:
                if out[check_id]["counterpart"] not in out:
                    del out[check_id]["counterpart"]
            if not any("counterpart" in out[i] for i in ids):
                raise ValueError(
                    f"{REGISTRY_FILE.name} [{key}]: counterpart {entry['counterpart']!r} names no "
                    "registered check"
                )
    return out


#: The status of a test that passed on a fast subset while the same test on the full data failed:
#: a proxy the full scale contradicts, never counted as a pass.
CONTRADICTED = "proxy contradicted"


def status(entry: dict, counterpart: dict | None = None) -> str:
    """The status word of a recorded check: a test "pass", a demonstration "shown" (it holds, as
    it must), either "FAIL" when it does not hold, and "not run" when it could not run. A test
    that passed on a fast subset (``scale`` "fast subset") whose ``counterpart``, the record of
    the same test on the full data, failed is :data:`CONTRADICTED`.

    Raises:
        ValueError: if ``entry`` (or ``counterpart``) lacks ``kind`` or ``passed``, or they hold
            other values.
    """
    word = _word(entry)
    if (
        word == "pass"
        and counterpart is not None
        and entry.get("scale") == "fast subset"
        and _word(counterpart) == "FAIL"
    ):
        return CONTRADICTED
    return word


def _word(entry: dict) -> str:
    try:
        kind, passed = entry["kind"], entry["passed"]
    except (KeyError, TypeError):
        raise ValueError(
            f"entry must be a record with kind and passed, got {repr(entry)[:80]}"
        ) from None
    if kind not in KINDS or passed not in (True, False, None):
        raise ValueError(f"entry has kind {kind!r} and passed {passed!r}")
    if passed is None:
        return "not run"
    if not passed:
        return "FAIL"
    return "pass" if kind == "test" else "shown"


def counterpart_of(entry: dict, entries: Sequence[dict[str, Any]]) -> dict | None:
    """The record among ``entries`` of ``entry``'s full-data counterpart (the registry's
    ``counterpart``), or ``None`` when it has none or it was not recorded."""
    spec = registry().get(entry.get("id", ""), {})
    target = spec.get("counterpart")
    return next((e for e in entries if e.get("id") == target), None) if target else None


def tally(entries: Sequence[dict[str, Any]]) -> str:
    """The count at the top of the claims page: ``"N tests: p pass, f fail, r not run · M
    demonstrations"``, with ``c proxies contradicted at full scale`` when a fast-subset pass has a
    failed full-data counterpart (:func:`status`): only tests that pass count as support.

    Args:
        entries: records as :func:`~lib.book.checks.record` returns them (``kind``, ``passed``,
            and ``id`` and ``scale`` for the counterparts).
    """
    tests = [e for e in entries if e["kind"] == "test"]
    words = [status(e, counterpart_of(e, entries)) for e in tests]
    shown = sum(e["kind"] == "demonstration" for e in entries)
    proxies = words.count(CONTRADICTED)
    contradicted = (
        f", {proxies} prox{'ies' if proxies != 1 else 'y'} contradicted at full scale"
        if proxies
        else ""
    )
    return (
        f"{len(tests)} tests: {words.count('pass')} pass, {words.count('FAIL')} fail"
        f"{contradicted}, {words.count('not run')} not run · {shown} "
        f"demonstration{'s' * (shown != 1)}"
    )
