"""`make data` (run by `make book` and `make test`): obtain Fashion-MNIST when it is missing.

Fashion-MNIST ships only in the Debian package ``dataset-fashion-mnist``. When no copy is found
(``BOOK_FASHION_MNIST``, the package's ``/usr/share/datasets/fashion-mnist``, or the project's
own ``_data/fashion-mnist``), this script downloads the package with ``apt-get download`` (no
root needed), unpacks it with ``dpkg-deb -x`` and keeps the four IDX files in
``_data/fashion-mnist`` (ignored by git), where ``lib.datasets.images`` finds them with no variable
set.
Each file is checked against the official Fashion-MNIST sizes and the SHA-256 of its content
before it is kept.

Where that cannot work (no apt, no package lists, no network to the Debian mirror), it prints one
line saying so and exits 0: the book still builds, and Chapter 5 runs its experiment on the
datasets that are present and says which did not run. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run by the system Python: lib._env is standard library only
from lib import _env  # noqa: E402

TARGET = ROOT / "_data" / "fashion-mnist"
SYSTEM = Path("/usr/share/datasets/fashion-mnist")
PACKAGE = "dataset-fashion-mnist"

#: The official IDX files: uncompressed size in bytes (16-byte header + 28x28 images, or 8-byte
#: header + labels) and the SHA-256 of the uncompressed content. The Debian package recompresses
#: the .gz files, so their compressed bytes differ from upstream's; their content does not.
FILES = {
    "train-images-idx3-ubyte.gz": (
        47_040_016,
        "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    ),
    "train-labels-idx1-ubyte.gz": (
        60_008,
        "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    ),
    "t10k-images-idx3-ubyte.gz": (
        7_840_016,
        "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    ),
    "t10k-labels-idx1-ubyte.gz": (
        10_008,
        "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
    ),
}


def complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FILES)


def verify(folder: Path) -> str | None:
    """None when the four files hold the official content, else what is wrong."""
    for name, (size, sha) in FILES.items():
        try:
            content = gzip.decompress((folder / name).read_bytes())
        except (OSError, EOFError) as exc:
            return f"{name} cannot be read ({exc})"
        if len(content) != size:
            return f"{name} holds {len(content):,} bytes, the official file {size:,}"
        if hashlib.sha256(content).hexdigest() != sha:
            return f"{name} differs from the official file (SHA-256)"
    return None


def fetch() -> str:
    """Download and unpack the package into ``_data/fashion-mnist``; return what happened."""
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        return "not a Debian-family machine (no apt-get/dpkg-deb)"
    with tempfile.TemporaryDirectory(dir=ROOT / "_data") as tmp:
        download = subprocess.run(
            ["apt-get", "download", "-q", PACKAGE],
            cwd=tmp,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        debs = sorted(Path(tmp).glob(f"{PACKAGE}_*.deb"))
        if download.returncode != 0 or not debs:
            last = (download.stdout.strip().splitlines() or ["no output"])[-1]
            return f"`apt-get download {PACKAGE}` failed ({last}); `apt-get update` may be needed"
        unpacked = Path(tmp) / "root"
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(unpacked)], check=True)
        source = unpacked / SYSTEM.relative_to("/")
        problem = verify(source) if complete(source) else "the package lacks the IDX files"
        if problem:
            return f"the downloaded package was rejected: {problem}"
        TARGET.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            shutil.move(str(source / name), TARGET / name)
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/fetch_data.py",
        description="make data: unpack Fashion-MNIST into _data/ when no copy is found.",
    )
    _env.parse_args(parser, argv)
    named = _env.read_path("BOOK_FASHION_MNIST")
    for folder in ([named] if named else []) + [SYSTEM, TARGET]:
        if complete(folder):
            return 0
    (ROOT / "_data").mkdir(exist_ok=True)
    try:
        why = fetch()
    except (OSError, subprocess.SubprocessError) as exc:
        why = f"{type(exc).__name__}: {exc}"
    if why:
        print(
            f"Fashion-MNIST is not available ({why}): the book builds without it, and Chapter 5 "
            f"says which dataset did not run. To add it: apt-get install {PACKAGE}, or make data "
            "after apt-get update.",
            flush=True,
        )
        return 0
    print(
        f"Fashion-MNIST: unpacked the Debian package {PACKAGE} into {TARGET.relative_to(ROOT)} "
        "(official sizes and content checked)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
