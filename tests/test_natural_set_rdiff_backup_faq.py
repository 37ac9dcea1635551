"""The ``rdiff-backup-faq`` natural-question set (``bench/natural_sets.py``), its reading of
rdiff-backup's AsciiDoc FAQ and the question-leak check (``bench/check_question_leaks.py``)
on a small inline FAQ shaped as Debian's ``rdiff-backup`` ships it
(``/usr/share/doc/rdiff-backup/FAQ.adoc.gz``, AsciiDoc source: the title with its
``{page-name}`` attribute, attribute lines, the button link, the rule ``'''''``, the
``toc::[]`` macro, then ``== <question>`` sections, one stated with "Help!", one quoting a
message in curved quotes ``"`...`"``, one with ``code`` backticks; answers with a
``----`` listing block holding a line that looks like a section title, a ``....`` literal
block with a mailed message, a ``===`` sub-title and a ``CAUTION:`` note; an unanswered
section) beside the package's other AsciiDoc documents, Debian's README and the man pages
(one over the limit) in a package tree laid out as the package unpacks (marker present,
nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the sections, a
README quoting one); each answer is exactly the text under its title up to the next; ids
are the section numbers, so an entry added at the end keeps the halves; an answer too short
to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_LEVELS = "What do the different verbosity levels mean?"
Q_NAMES = "Help! Why do all my filenames now look like ;077y;070ile ?!"
Q_TUPLE = 'What does "tuple index out of range" mean?'
Q_BW = "Is there some way to limit rdiff-backup's bandwidth usage, as in rsync's --bwlimit option?"
Q_PORT = "How to use a custom port for SSH access?"
ASKED = (Q_LEVELS, Q_NAMES, Q_TUPLE, Q_BW, Q_PORT)
A_LEVELS = (
    "There is no formal specification, but here is a rough description:\n\n"
    " 0 No information given\n 1 Fatal Errors displayed\n 2 Warnings"
)
A_NAMES = (
    "This is rdiff-backup's quoting: characters the destination cannot hold are quoted.\n\n"
    "=== Details\n\nSee the `--override-chars-to-quote` option."
)
A_TUPLE = (
    "It is a bug in an old version; upgrade.\n\n"
    "....\nFrom: Ben Escoto <ben@example.org>\nSubject: Re: tuple index\n\n"
    "Fixed in the next release.\n....\n\n"
    "CAUTION: the archive may need a regress after it."
)
A_BW = (
    "rdiff-backup itself has no such option, but the transport can limit it:\n\n"
    "----\n== not a question, a line of the listing\n"
    "rdiff-backup --remote-schema 'ssh -C %s rdiff-backup server' a b::c\n----\n\n"
    "trickle works too."
)
A_PORT = (
    "Use the URI form `ssh://[user@]hostname[:port]` of the hostname, e.g.\n\n"
    "----\nrdiff-backup backup mylocaldir ssh://myuser@myhost:2222::/backup_repo\n----"
)
ANSWERS = {"1": A_LEVELS, "2": A_NAMES, "3": A_TUPLE, "5": A_BW, "6": A_PORT}

FAQ = (
    "= rdiff-backup: {page-name}\n:page-name: F.A.Q.\n:sectnums:\n:toc: macro\n\n"
    "link:.[Home,role=\"button round\"] // *{page-name}*\n\n'''''\n\ntoc::[]\n\n\n"
    f"== {Q_LEVELS}\n\n{A_LEVELS}\n\n"
    "== Help! Why do all my filenames now look like ;077y;070ile ?!\n\n"
    f"{A_NAMES}\n\n"
    '== What does "`tuple index out of range`" mean?\n\n'
    f"{A_TUPLE}\n\n"
    "== Is this section answered at all?\n\n"
    "== Is there some way to limit rdiff-backup's bandwidth usage, as in rsync's "
    "`--bwlimit` option?\n\n"
    f"{A_BW}\n\n"
    f"==  {Q_PORT}  \n\n{A_PORT}\n"
)


def test_split_rdiff_backup_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_rdiff_backup_faq(FAQ)
    # every == section a question (curved quotes and backticks read, spaces folded); ids the
    # section numbers, the unanswered one counted; the answer the text up to the next
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the title, attributes and contents macro stay, in no answer; the unanswered title
    # leaves the page; the listing's "== " line and the === sub-title stay in their answers
    assert page.startswith("= rdiff-backup: {page-name}\n:page-name: F.A.Q.")
    assert "toc::[]" in page and "answered at all" not in page
    assert "\n== not a question, a line of the listing\n" in page
    assert all("toc::[]" not in a and ":sectnums:" not in a for *_, a in qa)


def test_split_rdiff_backup_faq_edges() -> None:
    # no section: the text kept, nothing asked; "==" with no space, "===" and "=" titles are
    # text; a "== " line inside any delimited block is text, a different delimiter inside
    # does not close it; the last answer runs to the end
    page, none = ns.split_rdiff_backup_faq("= Title\n\nText.\n==no space\n=== Sub\n")
    assert none == [] and page == "= Title\n\nText.\n==no space\n=== Sub\n"
    page, qa = ns.split_rdiff_backup_faq(
        "== One?\n\n////\n== in a comment\n----\n== still in it\n////\n\n"
        "== Two?\n\n....\n== literal\n....\nafter\n"
    )
    assert qa == [
        ("1", "One?", "////\n== in a comment\n----\n== still in it\n////"),
        ("2", "Two?", "....\n== literal\n....\nafter"),
    ]
    assert page == (
        "////\n== in a comment\n----\n== still in it\n////\n\n....\n== literal\n....\nafter\n"
    )
    assert ns.adoc_question("Why \"`a`\" and `b` and '`c`'?") == "Why \"a\" and b and 'c'?"


_WORD = st.sampled_from(["backup", "restore", "mirror", "increment", "ssh", "quoting", "regress"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=12),  # the question's words
            st.booleans(),  # a listing block with a "== " line in the answer
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_rdiff_backup_faq_property(entries: list[tuple[list[str], bool, list[str]]]) -> None:
    """Random sections, some with a listing holding a "== " line, some unanswered, after the
    header: one question per answered section, in order, its number its id, the text under
    it its answer, in the page; no question's word left in it."""
    text, expected = "= Random: {page-name}\n:sectnums:\n\ntoc::[]\n\n", []
    for n, (qwords, listing, awords) in enumerate(entries, start=1):
        question = " ".join([f"entry{n}x", *qwords]) + "?"
        answer = " ".join(["Answer", *awords]) if awords else ""
        if answer and listing:
            answer += "\n\n----\n== rdiff-backup --help\n----"
        text += f"== {question}\n\n{answer}\n\n"
        if answer:
            expected.append((str(n), question, answer))
    page, qa = ns.split_rdiff_backup_faq(text)
    nsc.assert_random_split(page, qa, expected)
    assert page.startswith("= Random: {page-name}")


# -- the set, built from a package tree shaped like Debian's rdiff-backup -------------------


def _man(name: str, body: str) -> str:
    return f'.TH {name.upper()} 1 "2024"\n.SH NAME\n{name} \\- a program\n.SH DESCRIPTION\n{body}'


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.RDIFF_PACKAGE, "2.2.2-1")
    doc: Path = root / ns.RDIFF_DOC
    write_gz(doc / ns.RDIFF_FAQ, faq)
    write_gz(
        doc / "README.adoc.gz",
        f"= rdiff-backup\n\nA reverse differential backup tool. Often asked: {Q_PORT} "
        "See the FAQ.\n",
    )
    write_gz(doc / "examples.adoc.gz", "= Examples\n\n`rdiff-backup backup foo bar`\n")
    (doc / "README.Debian").write_text("The Debian package installs the new CLI.\n")
    man = root / "usr/share/man/man1"
    write_gz(man / "rdiff-backup.1.gz", _man("rdiff-backup", "Backs up one directory.\n"))
    write_gz(man / "rdiff-backup-old.1.gz", _man("rdiff-backup-old", "The old CLI.\n" * 12_000))
    write_gz(doc / "CHANGELOG.adoc.gz", "left out\n")
    (doc / "credits.adoc").write_text("left out\n")
    write_gz(doc / "COPYING.gz", "left out\n")
    write_gz(doc / "NEWS.Debian.gz", "left out\n")
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_rdiff_backup_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.rdiff_backup_faq_set()
    nsc.assert_package_set(
        nset,
        "rdiff-backup-faq",
        ids=list(ANSWERS),
        files={
            "FAQ.adoc",
            "README.adoc",
            "examples.adoc",
            "README.Debian",
            "man/rdiff-backup.1.md",
        },
        source="FAQ.adoc",
        version="2.2.2-1",
        too_long="man/rdiff-backup-old.1.md",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the README quoting a question scrubbed, its other text kept; the man page as text
    assert "See the FAQ." in nset.files["README.adoc"]
    assert "Backs up one directory." in nset.files["man/rdiff-backup.1.md"]


def test_rdiff_backup_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(A_PORT, "Use ssh://host:2222.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.rdiff_backup_faq_set(), Q_PORT, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.rdiff_backup_faq_set(), {"FAQ.adoc": FAQ}, ASKED)


def test_rdiff_backup_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ + (
        "\n== How do I list the increments of a repository?\n\n"
        "Call rdiff-backup list increments with the repository's path.\n"
    )
    nsc.assert_halves_survive_an_added_question(
        ns.rdiff_backup_faq_set, lambda: write_gz(doc / ns.RDIFF_FAQ, more)
    )


def test_rdiff_backup_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.RDIFF_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.rdiff_backup_faq_set, ns.RDIFF_FAQ)
