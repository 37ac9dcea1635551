"""A folder's man pages are read as ``man`` shows them, not as their roff source.

usage87: over Debian's mutt documentation with the package's man pages beside it
(``man/muttrc.5.gz``, ``man/mutt.1.gz``, ...), the ``man`` folder was abstracted ``'\\" t;
.\\" Project ; .\\" -*-nroff-*-`` (each page's first line, a roff comment) and every passage
held ``.TP``, ``\\fB``, ``.BI`` requests. A file named as a manual section whose requests open
with ``.TH`` is now read through the benchmark's roff reader (moved to
``treehop.ingest.roff``): ``# muttrc(5)``, ``## DESCRIPTION``, fonts and comments out.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.loaders import walk

from treehop_test_doubles import BagOfWordsEmbedder

MUTTRC = r"""'\" t
.\" -*-nroff-*-
.\"
.\"     Copyright (C) 1996-2000 Michael Elkins <me@cs.hmc.edu>
.de EX
.nf
.ft CW
..
.TH muttrc 5 "September 2023" Unix "User Manuals"
.SH NAME
muttrc \- Configuration file for the Mutt Mail User Agent
.SH DESCRIPTION
.PP
A mutt configuration file consists of a series of \fBcommands\fP.
Each line of the file may contain one or more commands.
.SH COMMANDS
.PP
.nf
\fBset\fP [\fBno\fP|\fBinv\fP]\fIvariable\fP[=\fIvalue\fP] [ ... ]
.fi
.IP
This command is used to set (turn on), unset (turn off) or toggle the
value of a variable. The \fBsort\fP variable orders the index.
.TP
.BI "alias " key " address"
Defines an alias for a recipient address.
"""

MUTT1 = r""".\" comment line naming nothing
.TH mutt 1 "January 2022" Unix "User Manuals"
.SH NAME
mutt \- The Mutt Mail User Agent
.SH OPTIONS
.TP
.BI "-F " rcfile
Specify an initialization file to read instead of ~/.muttrc.
"""

ROFF_MARKS = ('.\\"', "\\f", ".TH", ".SH", ".TP", ".BI", ".PP", ".nf", ".de ", "'\\\"")


def _folder(tmp_path: Path) -> Path:
    doc = tmp_path / "mutt"
    (doc / "man").mkdir(parents=True)
    (doc / "man" / "muttrc.5.gz").write_bytes(gzip.compress(MUTTRC.encode()))
    (doc / "man" / "mutt.1").write_text(MUTT1, encoding="utf-8")
    return doc


def test_a_folders_man_pages_are_read_as_man_shows_them(tmp_path: Path) -> None:
    doc = _folder(tmp_path)
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(str(doc), target_uri="viking://resources/mutt")
        page = th.read("viking://resources/mutt/man/muttrc.5.gz")
        shown = {e.uri.rsplit("/", 1)[1]: e.abstract for e in th.ls("viking://resources/mutt/man")}
        man = th.read("viking://resources/mutt/man")  # the folder's overview
        hits = th.find("which command sets a variable such as sort", limit=5)
    # the page's title and NAME line, not its first roff comment
    assert shown["muttrc.5.gz"].startswith("muttrc(5): muttrc - Configuration file for the Mutt")
    assert shown["mutt.1"].startswith("mutt(1): mutt - The Mutt Mail User Agent")
    assert "nroff" not in man and '\\"' not in man
    assert "This command is used to set (turn on), unset (turn off)" in page
    assert "[no|inv]variable[=value]" in page  # fonts out, the synopsis kept
    for text in [page, *shown.values(), man, *(m.content for m in hits.contexts())]:
        assert not any(mark in text for mark in ROFF_MARKS), text
    assert any(m.uri.startswith("viking://resources/mutt/man/muttrc") for m in hits.contexts())


def test_the_walk_reads_a_man_page_as_markdown_headed_by_its_name(tmp_path: Path) -> None:
    report = walk(_folder(tmp_path))
    files = {f.relpath: f for f in report.files}
    for rel, head in [("man/muttrc.5.gz", "# muttrc(5)"), ("man/mutt.1", "# mutt(1)")]:
        assert files[rel].kind == "markdown"
        assert files[rel].text.startswith(head + "\n")
    assert "## OPTIONS" in files["man/mutt.1"].text
    assert "-F rcfile" in files["man/mutt.1"].text


def test_controls_other_files_named_like_a_section_stay_plain_text(tmp_path: Path) -> None:
    doc = tmp_path / "d"
    doc.mkdir()
    (doc / "notes.1").write_text("Release notes.\nUse the .TH request first.\n", encoding="utf-8")
    (doc / "redirect.3").write_text(".so man3/other.3\n.TH late 3\n", encoding="utf-8")
    (doc / "mdoc.1").write_text(".Dd $Mdocdate$\n.Dt MKSH 1\n.TH x 1\n", encoding="utf-8")
    (doc / "page.txt").write_text(MUTT1, encoding="utf-8")  # not named as a section
    files = {f.relpath: f for f in walk(doc).files}
    assert files["notes.1"].kind == "text"
    assert files["redirect.3"].kind == "text" and files["redirect.3"].text.startswith(".so")
    assert files["mdoc.1"].kind == "text"
    assert files["page.txt"].kind == "text" and files["page.txt"].text.startswith('.\\"')


_WORD = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,9}", fullmatch=True)
_PREAMBLE = st.lists(
    st.one_of(
        _WORD.map(lambda w: f'.\\" {w}'),
        _WORD.map(lambda w: f".ds {w} x"),
        st.just("'\\\" t"),
        st.just(""),
    ),
    max_size=12,
)
_SECTION = st.from_regex(r"[1-9][a-z]{0,3}", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(_PREAMBLE, _WORD, _SECTION, st.lists(_WORD, min_size=1, max_size=20), _WORD)
def test_property_a_th_page_after_any_preamble_is_read_whole_without_its_comments(
    preamble: list[str], name: str, section: str, words: list[str], secret: str
) -> None:
    from treehop.ingest.roff import is_man_page, roff_page_markdown  # (new with this change)

    body = " ".join(words)
    roff = "\n".join(
        [*preamble, f".TH {name} {section}", f'.\\" {secret}-comment', ".SH NAME", body]
    )
    assert is_man_page(f"{name}.{section}", roff)
    md = roff_page_markdown(roff)
    assert md.startswith(f"# {name}({section})\n") and body in md
    assert f"{secret}-comment" not in md
    # the same text under a name that is no manual section, or without .TH, is not a page
    assert not is_man_page(f"{name}.txt", roff)
    assert not is_man_page(f"{name}.{section}", "\n".join([*preamble, ".SH NAME", body]))
