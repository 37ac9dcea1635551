"""A Debian package as the benchmark's set builders find it after ``fetch_debian_package``
unpacked it: the cache pointed at a test folder, the package's root made and its unpack
marker written, so a builder reads the files a test puts there and downloads nothing."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import datasets as ds


def unpacked_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, version: str
) -> Path:
    """The root of ``package`` (unpacked, version ``version``) in a benchmark cache at
    ``tmp_path``; the test writes the package's files under it."""
    monkeypatch.setattr(ds, "CACHE_DIR", tmp_path)
    root = ds.debian_package_root(package)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".bench-unpacked").write_text(f"{version}\n")
    return root


def write_gz(path: Path, text: str, encoding: str = "utf-8") -> None:
    """``text`` gzipped at ``path`` (folders made), as Debian ships a compressed doc file
    (``FAQ.gz``, a man page): one copy for the set tests' package trees."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding=encoding) as fh:
        fh.write(text)
