"""A compressed file's context header names it as its stem, not as a file that is not there.

usage85: over lighttpd's doc folder (Debian ``lighttpd-doc``: ``authentication.txt.gz``,
``performance.txt.gz`` beside ``dirlisting.txt``), the ``create_agent`` middleware's block
and MCP ``context`` headed sections ``[dirlisting]`` and ``[authentication.txt]``: the
header drops a name's extension, and for ``.txt.gz`` it dropped ``.gz`` alone, naming a file
the tree does not hold, which the model is told to cite. Now ``.txt.gz`` goes as a whole
(``[authentication]``); two names alike once shortened keep their full names, as before.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

_AUTH = "Using Authentication\n\nThe auth module provides basic and digest authentication.\n"
_LIST = "Directory Listings\n\nmod_dirlisting generates HTML based directory listings.\n"


def test_a_gz_files_header_is_its_stem_in_an_agents_context(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "authentication.txt.gz").write_bytes(gzip.compress(_AUTH.encode()))
    (doc / "dirlisting.txt").write_text(_LIST, encoding="utf-8")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(str(doc), target_uri="viking://resources/doc")
        hits = th.find("basic and digest authentication directory listings", limit=5)
        block = th.assemble_context(hits, max_tokens=400)
    assert "[authentication]\n" in block.text and "[dirlisting]\n" in block.text
    assert "[authentication.txt]" not in block.text
    assert "viking://resources/doc/authentication.txt.gz" in block.uris  # full URIs kept


def test_names_alike_once_shortened_keep_their_full_names() -> None:
    assert ca._without_extensions({"1": "a.txt.gz", "2": "a.txt"}) == {
        "1": "a.txt.gz",
        "2": "a.txt",
    }
    assert ca._without_extensions({"1": "FAQ.gz", "2": "b.md"}) == {"1": "FAQ", "2": "b"}
    # not an extension: kept as before
    assert ca._without_extensions({"1": "changelog.Debian.gz", "2": "README.Debian"}) == {
        "1": "changelog.Debian",
        "2": "README.Debian",
    }


_STEM = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,8}", fullmatch=True)
_EXT = st.sampled_from(["", ".txt", ".md", ".rst", ".html"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_STEM, _EXT, st.booleans()), min_size=1, max_size=8))
def test_a_header_never_names_another_file(files) -> None:
    """Property: each shortened name is its file's name without extension and ``.gz``, or the
    full name; the names stay distinct."""
    full = dict.fromkeys(f"{s}{e}{'.gz' if gz else ''}" for s, e, gz in files)
    names = {str(i): name for i, name in enumerate(full)}
    out = ca._without_extensions(names)
    assert len(set(out.values())) == len(out)
    for k, short in out.items():
        assert short in {names[k].split(".")[0], names[k]}, (names[k], short)
