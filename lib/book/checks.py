"""Record each numerical check for the claims page: a registered check's measurement, outcome
and verdict.

Vocabulary, one meaning per word:

* a *claim* is what a paper states (the ``claim`` text of an entry in ``checks.toml``);
* a *check* is the book's computation that tests a claim, and its record (an id such as C1, the
  measured value, pass or fail, the verdict); functions that run or record a check say "check";
* an *input guard* refuses a bad argument with a ``ValueError`` and is never called a check:
  ``require_*`` when it returns nothing (``lib._validate.require_size``), ``as_*`` when it
  returns the argument converted (``lib._validate.as_float_array``).

* :func:`~lib.book.registry.registry` reads the book's registry of checks,
  ``lib/book/checks.toml``: each check's fixed text once (claim, expected value, kind, basis,
  scale, threshold source, section, verdict words). A check is a *test* (it could fail if the
  statement were false; its threshold comes from the statement or a derivation) or a
  *demonstration* (it holds by definition, construction or arithmetic; shown, never counted as
  support).
* :func:`record` turns one measurement of a registered check (C1-C19, the checks of the papers'
  statements, or a check the book adds, B<chapter>.<k>) into a glued record ``check-<id>``; the
  book's Sphinx extension (``_ext/book_sphinx``) collects every record of every chapter into the
  ``checks-table`` of ``chapters/claims.md``, with :func:`~lib.book.registry.tally` above it, so
  nothing is retyped.
  :func:`not_run` records a check that could not run on this machine.
* :func:`checks_table` shows the checks recorded so far in this kernel, for a chapter's summary.

The numbers glued into the prose (:func:`~lib.book.prose.glue`, :func:`~lib.book.prose.fmt`, ...)
are :mod:`lib.book.prose`'s, the tables shown on the pages (:func:`~lib.book.display.number_table`)
:mod:`lib.book.display`'s; both are re-exported here for the chapters' older imports
(``from lib.book.checks import glue``), as are the registry's names.

Every function raises :class:`ValueError`, naming the argument, for an unregistered check or a
record that does not fit its registered text.

Source: the book's own. Used by every chapter.
"""

from __future__ import annotations

import json
import string
from typing import Any

import mpmath
import numpy as np
import pandas as pd
import torch

from .. import _env
from .._constants import CHECK_PREFIX
from .._validate import flag, short_repr

# The tables' and the prose helpers' names, re-exported for the chapters (documented in
# lib.book.display and lib.book.prose).
from .display import HtmlTable
from .display import markdown_table as markdown_table
from .display import number_table as number_table
from .prose import YES_NO as YES_NO
from .prose import _as_text, glue
from .prose import fmt as fmt
from .prose import glue_many as glue_many
from .prose import joined as joined
from .prose import pretty as pretty

# The registry's names, re-exported for the chapters (documented in lib.book.registry).
from .registry import BASES as BASES
from .registry import CONTRADICTED as CONTRADICTED
from .registry import KINDS as KINDS
from .registry import REGISTRY_FILE as REGISTRY_FILE
from .registry import SCALES as SCALES
from .registry import counterpart_of as counterpart_of
from .registry import registry as registry
from .registry import status as status
from .registry import tally as tally

__all__ = [
    "record",
    "not_run",
    "checks_table",
    "CHECK_PREFIX",
    "FORCE_FAIL",
]

_RECORDED: dict[str, dict] = {}


#: The name of the environment variable that lists (comma-separated) the check ids whose result
#: is forced to "fail", for the test that the prose and the claims page follow the recorded result.
FORCE_FAIL = "BOOK_FORCE_FAIL"


def _forced(check_id: str) -> bool:
    forced = _env.read(FORCE_FAIL)
    return isinstance(forced, tuple) and check_id in forced


def _registered(check_id: str) -> dict:
    if not isinstance(check_id, str) or check_id not in registry():
        raise ValueError(
            f"check_id {short_repr(check_id)} is not registered in {REGISTRY_FILE.name}"
        )
    return registry()[check_id]


def _fill(check_id: str, name: str, template: str, fields: dict) -> str:
    try:
        return template.format(**fields)
    except KeyError as err:
        raise ValueError(
            f"{check_id}: the registry's {name} needs the field {err.args[0]!r}; pass it to record"
        ) from None


def record(
    check_id: str,
    measured: float | str | np.generic | torch.Tensor | mpmath.mpf,
    passed: bool | np.bool_,
    *,
    scale: str | None = None,
    **fields: Any,
) -> dict:
    """Record one check for the claims page and glue it as ``check-<check_id>``.

    The check's fixed text (claim, expected, source, kind, basis, threshold, verdict words) is
    registered once in :data:`~lib.book.registry.REGISTRY_FILE`; the chapter supplies only its
    measurement, the outcome, and the values the registered templates name (``{name}`` or
    ``{name:.3f}``). Prose verdicts are glued from the outcome, so that they follow the
    measurement (and a forced failure, see :data:`FORCE_FAIL`).

    Args:
        check_id: a registered id, e.g. ``"C3"`` (a check of a paper's statement) or ``"B1.2"``
            (one a chapter adds); ``"C19.mnist"`` for a registered variant.
        measured: what the chapter computed: a number (formatted with
            :func:`~lib.book.prose.fmt`) or a string.
        passed: whether the measurement meets the registered expectation, computed by the chapter
            from a measurement made independently of the claim (a Python or numpy bool).
        scale: the scale, where the registry lists several (a key of
            :data:`~lib.book.registry.SCALES`).
        **fields: the values the registry's templates of this check name; every one of them,
            and no other.

    Returns:
        The record as a dict (``id, section, kind, basis, scale, claim, expected, threshold, why,
        source, measured, passed``); ``passed`` is ``False`` whatever the measurement when the
        id is listed in the environment variable ``BOOK_FORCE_FAIL`` (a test of the book's
        honesty). ``verdict-<check_id>`` is glued with the registered verdict for the outcome.

    Raises:
        ValueError: for an unregistered id, a ``passed`` that is not a bool, a scale the registry
            does not list for this check, or a field missing from or unknown to its templates.
    """
    entry = _entry(check_id, _as_text("measured", measured), scale, fields)
    passed = flag("passed", passed)
    return _store(entry | {"passed": bool(passed) and not _forced(check_id)})


def _entry(
    check_id: str, measured: str, scale: str | None, fields: dict, verdict: bool = True
) -> dict:
    spec = _registered(check_id)
    if scale is None:
        if len(spec["scale"]) != 1:
            raise ValueError(f"{check_id}: scale must be one of {spec['scale']}, got None")
        scale = spec["scale"][0]
    elif scale not in spec["scale"]:
        raise ValueError(
            f"{check_id}: scale must be one of {spec['scale']}, got {short_repr(scale)}"
        )
    used = set()
    for name in ("claim", "expected", *(("verdict",) if "verdict" in spec else ())):
        texts = spec[name] if name == "verdict" else [spec[name]]
        for text in texts:
            used |= {f for _, f, _, _ in string.Formatter().parse(text) if f}
    unknown = sorted(set(fields) - used)
    if unknown:
        raise ValueError(f"{check_id}: fields {unknown} are not named by its registered text")
    return {
        "id": check_id,
        "section": spec["section"],
        "kind": spec["kind"],
        "basis": spec["basis"],
        "scale": scale,
        "claim": _fill(check_id, "claim", spec["claim"], fields),
        "expected": _fill(check_id, "expected", spec["expected"], fields),
        "threshold": spec.get("threshold", ""),
        "why": spec["why"],
        "source": spec["source"],
        "measured": measured,
        "_verdict": (
            None
            if "verdict" not in spec or not verdict
            else tuple(_fill(check_id, "verdict", v, fields) for v in spec["verdict"])
        ),
    }


def _store(entry: dict) -> dict:
    verdict = entry.pop("_verdict", None)
    _RECORDED[entry["id"]] = entry
    glue(CHECK_PREFIX + entry["id"], json.dumps(entry, ensure_ascii=False))
    if verdict is not None and entry["passed"] is not None:
        glue(f"verdict-{entry['id']}", verdict[0] if entry["passed"] else verdict[1])
    return entry


def not_run(check_id: str, reason: str, *, scale: str | None = None, **fields: Any) -> dict:
    """Record a registered check that could not run on this machine (a dataset is missing).

    The claims page shows it with the status "not run" and ``reason`` as its measured value,
    never as a pass; the build prints one line per such check. A registered check that no
    chapter records at all is listed as "not run" too.

    Args:
        check_id, scale, fields: as for :func:`record`.
        reason: why it did not run, one sentence (e.g. which package is missing).

    Returns:
        The record as a dict (``passed`` is ``None``); ``verdict-<check_id>`` is glued as
        "did not run (<reason>)".

    Raises:
        ValueError: as :func:`record`, and for an empty ``reason``.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason must be a non-empty string, got {short_repr(reason)}")
    entry = _entry(check_id, f"not run: {reason.strip()}", scale, fields, verdict=False)
    entry = _store(entry | {"passed": None})
    glue(f"verdict-{check_id}", f"did not run ({reason.strip()})")
    return entry


def checks_table() -> HtmlTable:
    """The checks :func:`record`-ed in this kernel so far, one row each, in recording order.

    Returns:
        An :class:`~lib.book.display.HtmlTable` over a DataFrame indexed by check id with three
        columns, so that it fits beside a chapter's text: ``Status`` (a demonstration that holds is
        "shown"), ``Claim`` (the claim, then what was expected, with its basis in brackets, the
        scale and the source) and ``Measured``. The table classes are ``dataframe checks-table``
        (the book's stylesheet lets the sentences wrap and gives the claim room); the header's
        corner reads ``Check`` (the columns' name), so that the header is one row. ``.data`` is the
        DataFrame.
    """
    columns = ["Status", "Claim", "Measured"]
    recorded = list(_RECORDED.values())
    rows = {
        e["id"]: {
            "Status": status(e, counterpart_of(e, recorded)),
            "Claim": f"{e['claim']}. Expected: {e['expected']} ({e['basis']}). Scale: "
            f"{e['scale']}. Source: {e['source']}.",
            "Measured": e["measured"],
        }
        for e in _RECORDED.values()
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    return HtmlTable(frame.rename_axis(columns="Check"), "dataframe checks-table")
