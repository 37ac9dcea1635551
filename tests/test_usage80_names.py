"""A file name holding ``%``, ``?`` or ``#``, typed as it is on disk (helper usage80).

A folder's walk stores ``100%.txt`` as ``100%25.txt``, ``what?.txt`` as ``what%3F.txt`` and
``#hash.txt`` as ``%23hash.txt`` (URI-structural characters escaped). ``read`` / ``ls`` /
``remove`` of the name as typed said "no node at ..." or "has an invalid fragment
'#hash.txt'" with nothing about the escaping; the errors now name the URI meant, and that
URI reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidURIError, NotFoundError
from treehop.ingest.tree_builder import segment
from treehop.uri import SCHEME, as_stored_names

from treehop_test_doubles import BagOfWordsEmbedder

DIR = "viking://resources/odd"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Treehop]:
    src = tmp_path_factory.mktemp("u80names") / "odd"
    src.mkdir()
    (src / "100%.txt").write_text("a hundred percent of the backups are kept\n")
    (src / "what?.txt").write_text("what the mouse support does\n")
    (src / "#hash.txt").write_text("hash marks start comments in nanorc\n")
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(src, target_uri=DIR)
        yield th


def test_the_premise_the_names_are_stored_escaped(client: Treehop) -> None:
    names = sorted(e.uri.rsplit("/", 1)[1] for e in client.ls(DIR))
    assert names == ["%23hash.txt", "100%25.txt", "what%3F.txt"]


@pytest.mark.parametrize(
    ("typed", "stored"), [("100%.txt", "100%25.txt"), ("what?.txt", "what%3F.txt")]
)
def test_a_name_typed_as_on_disk_is_named_in_the_error(
    client: Treehop, typed: str, stored: str
) -> None:
    meant = f"{DIR}/{stored}"
    for call in (client.read, client.ls, client.remove, client.tree):
        with pytest.raises(NotFoundError) as err:
            call(f"{DIR}/{typed}")
        assert f"did you mean {meant}?" in str(err.value), call
    assert client.read(meant).strip()  # the URI named reads


def test_a_finds_target_typed_as_on_disk_is_named_too(client: Treehop) -> None:
    meant = f"{DIR}/100%25.txt"
    with pytest.raises(NotFoundError) as err:
        client.find("backups", target_uri=[f"{DIR}/100%.txt", f"{DIR}/gone.txt"])
    assert str(err.value).startswith("unknown target URI(s): ")
    assert f"did you mean {meant}?" in str(err.value)
    assert [m.uri for m in client.find("backups", target_uri=meant).contexts()] == [meant]


def test_a_hash_in_a_name_is_named_in_the_fragment_error(client: Treehop) -> None:
    with pytest.raises(InvalidURIError) as err:
        client.read(f"{DIR}/#hash.txt")
    msg = str(err.value)
    assert "has an invalid fragment '#hash.txt'" in msg
    meant = re.search(r"written %23 in a URI, as ls / tree show it: '([^']+)'", msg)
    assert meant is not None and meant.group(1) == f"{DIR}/%23hash.txt"
    assert "hash marks" in client.read(meant.group(1))


def test_control_a_missing_name_gets_no_guess(client: Treehop) -> None:
    for typed in ("nope%.txt", "nope?.txt", "nope.txt"):
        with pytest.raises(NotFoundError) as err:
            client.read(f"{DIR}/{typed}")
        assert "did you mean" not in str(err.value)


_NAME = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/#\\"),
    min_size=1,
    max_size=30,
).filter(lambda n: n.strip(".") != "" and not re.search(r"%[0-9A-Fa-f]{2}", n))


@given(_NAME, _NAME)
def test_the_guess_is_the_walks_own_escaping(folder: str, name: str) -> None:
    """A name with no ``%XX`` in it, typed raw, becomes what the walk stores: ``segment``."""
    typed = f"{SCHEME}resources/{folder}/{name}"
    assert as_stored_names(typed) == f"{SCHEME}resources/{segment(folder)}/{segment(name)}"


@given(_NAME, st.integers(0, 999))
def test_a_stored_uri_is_its_own_guess(name: str, chunk: int) -> None:
    stored = f"{SCHEME}resources/{segment(name)}"
    assert as_stored_names(stored) == stored
    assert as_stored_names(f"{stored}#chunk-{chunk}") == f"{stored}#chunk-{chunk}"


def test_the_docs_say_how_such_a_name_is_written() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    assert "`100%.txt` is `.../100%25.txt`" in text
    assert "did you mean .../100%25.txt?" in text
