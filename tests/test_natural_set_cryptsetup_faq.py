"""The ``cryptsetup-faq`` natural-question set (``bench/natural_sets.py``), its reader and the
question-leak check (``bench/check_question_leaks.py``) on small inline texts shaped like
Debian's ``cryptsetup`` (``FAQ.md.gz``: a Markdown title, a ``# Sections`` list of links,
sections ``# N. Title`` of bold bullet entries ``  * **N.M Title**`` with text indented two
spaces and code in fences at column 0, a references section of unnumbered bold bullets, the
contributors; notes and man pages beside it) in a package tree laid out as the package
unpacks (marker present, nothing downloaded); offline, no embedding model.

What the set's numbers rest on: no question's text is left in any file (the contents list,
a note quoting one aside); each answer is exactly the text under its question, up to the
next entry or section; a title's text after the closing ``**`` is part of it; unnumbered
entries and section preambles are no answer; ids are the authors' numbers; an answer too
short to judge leaves the set but not the corpus's scrubbing; the halves hold when an entry
is added.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_SWAP = "How do I set up encrypted swap?"
Q_RESIZE = "Can I resize a dm-crypt or LUKS container?"
Q_HEADER = "What about the size of the LUKS2 header?"
Q_SHORT = "What about backup? Does it compromise security?"
Q_NUKE = 'Why is there no "Nuke-Option"?'
Q_SSD = "What about SSDs, Flash, Hybrid and SMR Drives?"
BR = "  "  # Markdown's line break, as the FAQ ends some lines

FAQ_TEXT = f"""# Frequently Asked Questions Cryptsetup/LUKS

# Sections
[1. General Questions](#1-general-questions){BR}
[2. Setup](#2-setup){BR}
[11. References and Further Reading](#11-references-and-further-reading){BR}

# 1. General Questions


  * **1.1 What is this?**

  This is the FAQ (Frequently Asked Questions) for cryptsetup.  It covers
  Linux disk encryption with plain dm-crypt.


  * **1.2 WARNINGS**

  ATTENTION: If you are going to read just one thing, make it the section
  on Backup and Data Recovery.

# 2. Setup

  Setting up a container, in short.

  * **2.3 {Q_SWAP}**

  With plain dm-crypt and a random key, in /etc/crypttab:
```
    swap  /dev/sda2  /dev/urandom  swap,cipher=aes-xts-plain64
```
  Then run mkswap on the mapping.

  * **2.15 {Q_RESIZE}**

  Yes, you can, as neither dm-crypt nor LUKS1 stores partition size.{BR}
  See Item 2.3 and {Q_SWAP.lower()}

# 5. Security Aspects

  * **5.6 {Q_SHORT}**

  See Item 6.7.

 * **5.19 {Q_SSD}**

  Short answer: they can leave old key-slots readable after a change.

 * **5.21 {Q_NUKE}**

  A nuke option would destroy the header on a special passphrase.

# 10. LUKS2 Questions

  * **10.10 {Q_HEADER[:-1]}**?

  The LUKS2 header is 16 MiB by default, most of it keyslot area.

# 11. References and Further Reading


  * **Purpose of this Section**

  The purpose of this section is to collect references to all materials
  that do not fit the FAQ.

  * **Specifications**

  - LUKS on-disk format spec: See Item 1.2

  * **Tools**


# A. Contributors
In no particular order:

  - Arno Wagner

___
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


# -- the reader --------------------------------------------------------------------------------


def test_split_cryptsetup_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_cryptsetup_faq(FAQ_TEXT)
    # the references section's bullets are not numbered: no questions
    assert [key for key, _, _ in qa] == [
        "1.1",
        "1.2",
        "2.3",
        "2.15",
        "5.6",
        "5.19",
        "5.21",
        "10.10",
    ]
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["1.1"] == (
        "What is this?",
        "This is the FAQ (Frequently Asked Questions) for cryptsetup.  It covers\n"
        "Linux disk encryption with plain dm-crypt.",
    )
    assert by_key["1.2"][0] == "WARNINGS"  # an entry titled as a heading: as numbered
    # code keeps its fences and its indent relative to the text
    assert by_key["2.3"] == (
        Q_SWAP,
        "With plain dm-crypt and a random key, in /etc/crypttab:\n"
        "```\n"
        "  swap  /dev/sda2  /dev/urandom  swap,cipher=aes-xts-plain64\n"
        "```\n"
        "Then run mkswap on the mapping.",
    )
    assert by_key["5.6"] == (Q_SHORT, "See Item 6.7.")
    assert by_key["5.19"][0] == Q_SSD  # a bullet one space in
    assert by_key["10.10"] == (
        Q_HEADER,
        "The LUKS2 header is 16 MiB by default, most of it keyslot area.",
    )
    lines = text.split("\n")
    assert lines[0] == "# Frequently Asked Questions Cryptsetup/LUKS"
    assert [ln for ln in lines if ln.startswith("# ")] == [
        "# Frequently Asked Questions Cryptsetup/LUKS",
        "# 1. General Questions",
        "# 2. Setup",
        "# 5. Security Aspects",
        "# 10. LUKS2 Questions",
        "# 11. References and Further Reading",
        "# A. Contributors",
    ]
    assert "**Specifications**" in lines and "**Tools**" in lines
    # a section's preamble and the references' text are in the page, in no answer
    for kept in ("Setting up a container, in short.", "The purpose of this section", "Arno Wagner"):
        assert kept in text and not any(kept in a for _, _, a in qa)
    for _, q, a in qa:
        assert a in text
        if len(q.split()) > 1:
            assert q not in text
    assert "# Sections" not in text and "](#" not in text and "\n\n\n" not in text
    assert not re.search(r"\*\*\d+\.\d+", text)


def test_split_cryptsetup_faq_repeated_number_gets_a_suffix() -> None:
    faq = "# T\n\n# 1. A\n\n  * **1.1 Why?**\n\n  one\n\n  * **1.1 Why not?**\n\n  two\n"
    _, qa = ns.split_cryptsetup_faq(faq)
    assert qa == [("1.1", "Why?", "one"), ("1.1-2", "Why not?", "two")]


def test_split_cryptsetup_faq_an_entry_without_text_asks_nothing() -> None:
    faq = "# T\n\n# 1. A\n\n  * **1.1 Why?**\n\n  * **1.2 How?**\n\n  so\n"
    text, qa = ns.split_cryptsetup_faq(faq)
    assert qa == [("1.2", "How?", "so")]
    assert text == "# T\n\n# 1. A\n\nso\n"


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:*#", max_size=20),
    st.just(""),
    st.just(""),
    st.just("```"),
    st.builds(
        lambda n, t: f"# {n}. {t}",
        st.sampled_from(["1", "2", "10", "A"]),
        st.text("ab ?", min_size=1, max_size=8),
    ),
    st.builds(
        lambda pad, a, b, t, tail: f"{pad}* **{a}.{b} {t}**{tail}",
        st.sampled_from(["", " ", "  ", "   "]),
        st.integers(0, 3),
        st.integers(0, 12),
        st.text(alphabet="abcd ?-*", min_size=1, max_size=20),
        st.sampled_from(["", "?", " ", "  "]),
    ),
    st.builds(lambda t: f"  * **{t}**", st.text(alphabet="abc ?", min_size=1, max_size=10)),
    st.builds(lambda t: "    " + t, st.text(alphabet="abc1.? ", max_size=10)),
    st.builds(lambda t: "  " + t, st.text(alphabet="abc-?", min_size=1, max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_split_cryptsetup_faq_answers_are_in_the_page_and_questions_are_not(
    lines: list[str],
) -> None:
    """On random FAQ-like bodies: every answer is text of the page, ids are unique numbers,
    there are no more questions than numbered entry lines, no numbered entry line is left
    in the page, and the page never holds three line breaks in a row."""
    faq = "\n".join(["# Title", "", "# Sections", "[1. A](#1-a)", *lines])
    text, qa = ns.split_cryptsetup_faq(faq)
    assert text.startswith("# Title\n") and "\n\n\n" not in text
    assert "[1. A](#1-a)" not in text
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    numbered = [ln for ln in lines if re.match(r"^\s{0,3}\*\s+\*\*\s*\d+\.\d+\s+\S", ln)]
    assert len(qa) <= len(numbered)
    assert not any(re.match(r"^\s{0,3}\*\s+\*\*\s*\d+\.\d+\s", ln) for ln in text.split("\n"))
    for key, q, a in qa:
        assert re.fullmatch(r"\d+\.\d+(-\d+)?", key) and q.strip() and a.strip()
        assert a in text


# -- the set, built from a package tree shaped like Debian's cryptsetup -------------------------


ROFF_PAGE = (
    ".TH CRYPTTAB 5\n.SH NAME\ncrypttab \\- static information about encrypted filesystems\n"
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_TEXT) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.CRYPTSETUP_PACKAGE, "2:2.6.1-4~deb12u2")
    doc = root / ns.CRYPTSETUP_DOC
    (doc / "examples").mkdir(parents=True)
    write_gz(doc / ns.CRYPTSETUP_FAQ, faq)
    write_gz(doc / "README.Debian.gz", f"Debian notes\n\nSwap: {Q_SWAP.upper()} See crypttab(5).\n")
    (doc / "Keyring.txt").write_text("The kernel keyring holds the volume key.\n")
    (doc / "AUTHORS").write_text("Jana Saout\n")
    (doc / "v2.6.0-ReleaseNotes").write_text("Cryptsetup 2.6.0 Release Notes\n")
    write_gz(doc / "changelog.Debian.gz", "cryptsetup (2:2.6.1-4) unstable\n")
    write_gz(root / ns.CRYPTSETUP_MAN[0], ROFF_PAGE)
    return doc


def test_cryptsetup_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.cryptsetup_faq_set()
    assert [q.qid for q in nset.questions] == [
        "cryptsetup-faq:1.1",
        "cryptsetup-faq:1.2",
        "cryptsetup-faq:2.3",
        "cryptsetup-faq:2.15",
        "cryptsetup-faq:5.19",
        "cryptsetup-faq:5.21",
        "cryptsetup-faq:10.10",
    ]
    assert nset.left_out == (Q_SHORT,)  # "See Item 6.7.": under the judge's shingle
    # the notes as text, the man page converted; AUTHORS, release notes, changelog out
    assert set(nset.files) == {"FAQ.md", "README.Debian", "Keyring.txt", "man/crypttab.5.md"}
    assert nset.files["man/crypttab.5.md"] == ns.roff_page_markdown(ROFF_PAGE)
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    corpus = _corpus(nset.files)
    for q in [*nset.questions, ns.NaturalQuestion("x", Q_SHORT, ())]:
        if len(q.text.split()) >= 4:
            assert " ".join(q.text.split()).lower() not in corpus
    for q in nset.questions:
        assert q.answers[0][0] in nset.files["FAQ.md"]
        assert len(re.findall(r"\w+", q.answers[0][0])) >= ns.MIN_ANSWER_WORDS
    # a note and an answer quoting a question are scrubbed (case aside)
    assert nset.files["README.Debian"] == "Debian notes\n\nSwap:  See crypttab(5).\n"
    by_id = {q.qid: q.answers[0][0] for q in nset.questions}
    assert by_id["cryptsetup-faq:2.15"].endswith("See Item 2.3 and ")
    nsc.assert_files_as_written(nset)
    assert "2:2.6.1-4~deb12u2" in nset.note and "crypttab.5" in nset.note
    assert Q_SHORT in nset.note
    nsc.assert_held_out("cryptsetup-faq")


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy of any question, and finds every question
    in the FAQ as shipped (it could fail): "WARNINGS", a one-word entry, as its entry line
    ``* **1.2 WARNINGS**`` (a one-word question is a copy only alone on a line)."""
    _package(tmp_path, monkeypatch)
    nset = ns.cryptsetup_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == 8
    leaks = cql.find_leaks(nset.files, asked, False)
    assert [lk for lk in leaks if lk.kind in ("exact", "bare")] == []
    shipped = cql.find_leaks({"FAQ": FAQ_TEXT}, asked, False)
    # 10.10's "?" is outside its bold markers: found without it ("bare")
    assert {lk.question for lk in shipped if lk.kind in ("exact", "bare")} == set(asked)


def test_cryptsetup_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.cryptsetup_faq_set)
    more = FAQ_TEXT.replace(
        "# 2. Setup\n",
        "# 2. Setup\n\n  * **2.0 Can LUKS encrypt a file?**\n\n  Yes, on a loop device only.\n",
    )
    write_gz(doc / ns.CRYPTSETUP_FAQ, more)
    nsc.assert_halves_kept(ns.cryptsetup_faq_set, first, dev, test)


def test_cryptsetup_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.CRYPTSETUP_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.md\.gz under"):
        ns.cryptsetup_faq_set()
