"""Shared fixtures.

``BagOfWordsEmbedder`` is a deterministic test double for algorithm tests: each word is hashed to
a fixed random direction, so texts sharing words have high cosine. End-to-end tests use the real
offline MiniLM embedder instead.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

from treehop import redaction, text_tokenize
from treehop.embedders.base import BaseEmbedder

from treehop_test_doubles import SAMPLE_TREE, BagOfWordsEmbedder

__all__ = ["SAMPLE_TREE", "BagOfWordsEmbedder"]

# CI (CI=true, which .ci/run sets) runs every property test on Hypothesis's fixed example
# sequence: a CI result is then reproducible from the commit alone. Local runs keep random
# exploration (and the example database), which is how new counterexamples are found; each one
# found becomes a fix and an explicit case. Neither has the per-example deadline (200 ms by
# default): a test's speed is checked by the benchmarks in bench/, and on a loaded 2-core
# runner the deadline failed examples that were merely slow.
settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, deadline=None, database=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in {"1", "true", "yes"} else "local")


def pytest_configure(config: pytest.Config) -> None:
    """Each pytest-xdist worker gets its own IPython directory (helper ci75): the notebooks'
    kernels (``--nbmake``) otherwise share ``~/.ipython``, whose profile is created on first
    use and whose ``history.sqlite`` every kernel writes: two workers' kernels at once then
    race on one SQLite file and one profile folder. The kernels inherit the variable."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        os.environ["IPYTHONDIR"] = tempfile.mkdtemp(prefix=f"treehop-ipython-{worker}-")


@pytest.fixture(autouse=True)
def _secrets_registered_by_one_test_stay_in_it() -> Iterator[None]:
    """Each test sees the secret registry as it was before it ran, whatever earlier tests
    registered. Why: a registered secret masks every later text holding any 8 characters of
    it (:func:`treehop.redaction.redact`'s partial windows, by design), and since clients
    register the password of a ``user:password@`` base URL, a test building a client with
    ``sekret-password-123`` made later tests' ordinary word "password" come out as ``***``:
    failures that depended on the order the suite ran in. (Private names: the registry has no
    public reset, on purpose: a program never unregisters a secret.)"""
    with redaction._lock:
        saved = (set(redaction._secrets), set(redaction._windows), redaction._exact)
    yield
    with redaction._lock:
        redaction._secrets.clear()
        redaction._secrets.update(saved[0])
        redaction._windows.clear()
        redaction._windows.update(saved[1])
        redaction._exact = saved[2]


@pytest.fixture
def bow() -> BagOfWordsEmbedder:
    return BagOfWordsEmbedder()


@pytest.fixture
def sample_tree(tmp_path: Path) -> Iterator[Path]:
    dst = tmp_path / "sample_tree"
    shutil.copytree(SAMPLE_TREE, dst)
    yield dst


@pytest.fixture
def cut_reuse(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each BM25 upsert of the test found the tagger's cut of its texts to reuse
    (``text_tokenize.shared_words``), in call order."""
    found: list[bool] = []
    real = text_tokenize.shared_words

    def spy(texts: Sequence[str]) -> text_tokenize.AsciiWords | None:
        out = real(texts)
        found.append(out is not None)
        return out

    monkeypatch.setattr("treehop.lexical.shared_words", spy)
    return found


@pytest.fixture(scope="session")
def minilm() -> BaseEmbedder:
    from treehop.embedders.local_minilm import MiniLMEmbedder

    return MiniLMEmbedder()
