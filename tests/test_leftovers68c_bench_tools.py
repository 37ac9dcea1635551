"""Bench tooling, stop 67's leftovers (helper leftovers68c, bench/README.md
"(helper leftovers68c)"):

1. ``natural_sets.fetch_pypi_sdist`` could not fetch an sdist whose build backend is not
   installed here (``pip download --no-build-isolation``: beets, hatchling): it now falls
   back to pip's own throw-away build environment, installing nothing here. Tested with real
   pip against a real package index on loopback HTTP (PEP 503 pages), serving an sdist whose
   backend exists only as a wheel on that index.
2. ``scrub_questions`` and ``check_question_leaks`` counted a question's words differently
   (whitespace-separated vs ``\\w+``): one count now, ``natural_sets.question_words``.

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.util
import io
import os
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import datasets as ds
import natural_sets as ns

BACKEND = "leftovers68c_backend"
"""A build backend installed nowhere but on the loopback index (as hatchling was not here)."""
PROJECT, VERSION = "leftovers68c_demo", "1.0"

_BACKEND_CODE = f'''
import os

def get_requires_for_build_wheel(config_settings=None):
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = os.path.join(metadata_directory, "{PROJECT}-{VERSION}.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: {PROJECT}\\nVersion: {VERSION}\\n")
    return "{PROJECT}-{VERSION}.dist-info"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("only the metadata is asked for by pip download")
'''


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _backend_wheel(path: Path) -> None:
    """A pure-Python wheel of :data:`BACKEND` (PEP 427), written by hand."""
    info = f"{BACKEND}-1.0.dist-info"
    files = {
        f"{BACKEND}.py": _BACKEND_CODE.encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {BACKEND}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(path, "w") as whl:
        for name, data in files.items():
            whl.writestr(name, data)
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")


def _sdist(path: Path) -> None:
    """The demo project's sdist: a FAQ and a ``pyproject.toml`` naming :data:`BACKEND`."""
    top = f"{PROJECT}-{VERSION}"
    members = {
        "pyproject.toml": f'[build-system]\nrequires = ["{BACKEND}"]\n'
        f'build-backend = "{BACKEND}"\n',
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {PROJECT}\nVersion: {VERSION}\n",
        "docs/faq.rst": "FAQ\n===\n\nHow do I fetch it?\n------------------\n\nWith pip.\n",
    }
    with tarfile.open(path, "w:gz") as tar:
        for rel, body in members.items():
            data = body.encode()
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@contextlib.contextmanager
def _index(root: Path) -> Iterator[str]:
    """A PEP 503 "simple" index of the backend's wheel and the demo's sdist, served from
    ``root`` on loopback HTTP; yields its URL."""
    files = root / "files"
    files.mkdir(parents=True)
    wheel = f"{BACKEND}-1.0-py3-none-any.whl"
    sdist = f"{PROJECT}-{VERSION}.tar.gz"
    _backend_wheel(files / wheel)
    _sdist(files / sdist)
    for name, file in ((BACKEND, wheel), (PROJECT, sdist)):
        page = root / "simple" / name.replace("_", "-")
        page.mkdir(parents=True)
        (page / "index.html").write_text(
            f'<!DOCTYPE html><html><body><a href="../../files/{file}">{file}</a></body></html>'
        )
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def pip_on_loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """pip pointed at the loopback index only (no config file, no find-links), and the bench
    cache at ``tmp_path / "cache"``."""
    monkeypatch.setattr(ds, "CACHE_DIR", tmp_path / "cache")
    with _index(tmp_path / "index") as url:
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("PIP_INDEX_URL", url)
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
        monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "20")
        yield tmp_path / "cache"


def test_an_sdist_whose_backend_is_not_installed_is_fetched(pip_on_loopback: Path) -> None:
    # the premise: the backend is installed nowhere here
    assert importlib.util.find_spec(BACKEND) is None
    root = ns.fetch_pypi_sdist(PROJECT, VERSION)  # (c3a05a97: FileNotFoundError, pip's
    # "Cannot import 'leftovers68c_backend'" under --no-build-isolation)
    assert root == pip_on_loopback / "pypi" / f"{PROJECT}-{VERSION}"
    faq = root / f"{PROJECT}-{VERSION}" / "docs" / "faq.rst"
    assert "How do I fetch it?" in faq.read_text()
    assert (pip_on_loopback / "pypi" / "downloads" / f"{PROJECT}-{VERSION}.tar.gz").is_file()
    # nothing installed here: the backend lived in pip's throw-away build environment
    importlib.invalidate_caches()
    assert importlib.util.find_spec(BACKEND) is None


def test_a_missing_sdist_is_still_refused_with_the_hint(pip_on_loopback: Path) -> None:
    # a version the index does not have fails both routes: the hint names the route that
    # works without the backend, and pip's last words for each route are kept
    with pytest.raises(FileNotFoundError) as caught:
        ns.fetch_pypi_sdist(PROJECT, "9.9")
    said = str(caught.value)
    assert f"--no-binary {PROJECT} {PROJECT}==9.9" in said and "; then " in said, said
    assert not (pip_on_loopback / "pypi" / f"{PROJECT}-9.9").exists()


# -- 2. one word count -----------------------------------------------------------------------


def test_a_question_with_a_hyphen_is_scrubbed_where_the_leak_check_would_find_it() -> None:
    # heldout72's case: "Is Falcon thread-safe?" was 3 words to the scrub (short: kept in a
    # sentence) and 4 to the leak check (reported as an exact copy there)
    q = ns.NaturalQuestion("q1", "Is Falcon thread-safe?", (("It is.", 1),), "faq", "faq.rst")
    files = {"a.md": "Readers often ask: Is Falcon thread-safe? It is, with care.\n"}
    scrubbed, _ = ns.scrub_questions(files, [q])
    assert "thread-safe?" not in scrubbed["a.md"], scrubbed
    assert cql.find_leaks(scrubbed, [q.text], is_html=False) == []
    assert cql.find_leaks(files, [q.text], is_html=False)[0].kind == "exact"  # (control)


_WORD = st.sampled_from(["is", "falcon", "thread", "safe", "what", "s", "it", "don", "t", "x11"])
_JOIN = st.sampled_from([" ", "-", "'", " ", "/"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_WORD, _JOIN), min_size=2, max_size=6),
    _WORD,
    st.sampled_from(["Readers ask: ", "It is said that ", "(", ""]),
)
def test_a_question_the_scrub_counts_as_long_leaves_no_copy_the_check_finds(
    head: list[tuple[str, str]], last: str, before: str
) -> None:
    # one count: a question of SHORT_QUESTION_WORDS words or more (\w+ tokens, the leak
    # check's) is deleted wherever it stands, so the leak check finds no exact or bare copy
    # of it, whatever joins its words (c3a05a97: "thread-safe" joined, the scrub counted
    # fewer words, kept the sentence, and the check reported it)
    text = ("".join(w + j for w, j in head) + last).capitalize() + "?"
    q = ns.NaturalQuestion("q1", text, (("Yes.", 1),), "faq", "faq.rst")
    files = {"a.md": f"{before}{text} It is, with care.\n"}
    scrubbed, _ = ns.scrub_questions(files, [q])
    leaks = cql.find_leaks(scrubbed, [text], is_html=False)
    if len(head) + 1 >= ns.SHORT_QUESTION_WORDS:  # (each word is one \\w+ token)
        assert [lk for lk in leaks if lk.kind in ("exact", "bare")] == [], (text, scrubbed)
