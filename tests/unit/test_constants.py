"""lib._constants: the glue-key prefix of a check's record; the module imports nothing heavy."""

import json
import subprocess
import sys

from lib import _constants

from conftest import ROOT


def test_check_prefix_is_the_key_a_record_is_glued_under(registry, monkeypatch):
    """The built-site tests read records back by the literal prefix ``check-``; lib.book.checks
    glues each record under CHECK_PREFIX + its id, and the extension's claims table selects keys
    by the same constant."""
    import myst_nb

    from lib.book import checks

    glued = {}
    monkeypatch.setattr(
        myst_nb, "glue", lambda key, value, display=True: glued.update({key: value})
    )
    checks._RECORDED.clear()
    try:
        entry = checks.record("D1", "text", True, scale="exact")
    finally:
        checks._RECORDED.clear()
    assert _constants.CHECK_PREFIX == "check-"
    assert json.loads(glued["check-D1"]) == entry
    assert [k for k in glued if k.startswith(_constants.CHECK_PREFIX)] == ["check-D1"]


def test_importing_it_loads_no_torch_numpy_or_pandas():
    """The Sphinx extension imports it on every build, rebuilds included: it must import nothing
    heavy (a fresh interpreter, so that no other test's imports count)."""
    code = (
        "import sys; import lib._constants;"
        "print(sorted(m for m in ('torch', 'numpy', 'pandas', 'mpmath') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
