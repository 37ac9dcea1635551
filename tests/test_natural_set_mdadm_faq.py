"""The ``mdadm-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
Debian mdadm FAQ and the question-leak check (``bench/check_question_leaks.py``) on a small
inline FAQ shaped as Debian's ``mdadm`` ships it (``/usr/share/doc/mdadm/FAQ.gz``: plain
text, a title over ``===``, an intro; column-0 entries ``N. <question>`` over a column-0
``~`` line, follow-ups numbered ``4b.``, one question wrapped over an indented line, one
stated ("... What gives?"); answers indented two spaces with commands, bullets, a
footnote ``[0]``, sub-headings over indented ``'''`` and indented ``~`` lines, a table of
box-drawing characters; an entry with no text; the maintainer's signature line at the end)
beside the package's notes, examples and man pages (the recipes quoting a question, an
over-long man page, the release announcements, ``NEWS.Debian``, the changelogs and the
copyright to be left out), in a package tree laid out as ``mdadm`` unpacks (marker present,
nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, a note
quoting one); each answer is exactly the text under its question up to the next question or
the signature, its own sub-headings inside it; a wrapped question is read whole; ids are the
authors' numbers, so an added entry keeps the halves; an answer too short to judge leaves
the set but not the corpus's scrubbing.
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

Q_MD = "What does MD stand for?"
Q_MINOR = "How does mdadm determine which /dev/mdX or /dev/md/X to use?"
Q_LEVEL = "Which RAID level should I use?"
Q_RAID10 = "Can a 4-device RAID10 survive two device failures?"
Q_LAYOUT = "Which RAID10 layout scheme should I use"
Q_BUSY = "(One of) my RAID arrays is busy and cannot be stopped. What gives?"
Q_SAME = (
    "mdadm -E / mkconf report different arrays with the same device name / minor number. "
    "What gives?"
)
Q_WHY = "Why not?"
ASKED = (Q_MD, Q_MINOR, Q_LEVEL, Q_RAID10, Q_LAYOUT, Q_BUSY, Q_SAME, Q_WHY)

FAQ = """Frequently asked questions -- Debian mdadm
==========================================

Also see /usr/share/doc/mdadm/README.recipes.gz .

0. What does MD stand for?
~~~~~~~~~~~~~~~~~~~~~~~~~~
  MD is an abbreviation for "multiple device" (also often called "multi-
  disk").

  Most people refer to MD as RAID.

3. How does mdadm determine which /dev/mdX or /dev/md/X to use?
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  It first checks the superblock version of a given array. Run

    mdadm --detail /dev/mdX | sed -ne 's,.*Version : ,,p'

  Version 0 superblocks (00.90.XX)
  ''''''''''''''''''''''''''''''''
    You need to know the preferred minor number stored in the superblock.

4. Which RAID level should I use?
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  Many people seem to prefer RAID4/5/6 because it makes more efficient use of
  space.

4b. Can a 4-device RAID10 survive two device failures?
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  In two thirds of the cases, yes[0], and it does not matter which layout you
  use.

  [0] It's actually (n-2)/(n-1), where n is the number of devices.

5. Is this entry answered at all?
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

7. Which RAID10 layout scheme should I use
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  RAID10 gives you the choice between three ways of laying out chunks.

  "near" layout with 2 copies per chunk (--layout=n2):
  ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  The chunk copies are placed "as close to each other as possible".

  device1 device2
  ─────── ───────
     0       0      0x00
  ╰──────┬──────╯
       RAID1

8. (One of) my RAID arrays is busy and cannot be stopped. What gives?
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  Common causes for busy/locked arrays are:

    * The array contains a mounted filesystem (check the `mount' output)
    * The array is used by a process (check with `lsof')

12. mdadm -E / mkconf report different arrays with the same device
    name / minor number. What gives?
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  mdadm does *not* update the super-minor field for RAID0 arrays.

    ARRAY /dev/md0 level=raid0 num-devices=2 UUID=abcd...

9b. Why not?
~~~~~~~~~~~~
  RAID0 has zero redundancy. If you stripe a RAID0 across X devices, you
  increase the likelyhood of complete loss of the filesystem by a factor of X.

 -- martin f. krafft <madduck@debian.org>  Wed, 13 May 2009 09:59:53 +0200
"""
ANSWERS = {
    "0": 'MD is an abbreviation for "multiple device" (also often called "multi-\ndisk").\n\n'
    "Most people refer to MD as RAID.",
    "3": "It first checks the superblock version of a given array. Run\n\n"
    "  mdadm --detail /dev/mdX | sed -ne 's,.*Version : ,,p'\n\n"
    "Version 0 superblocks (00.90.XX)\n''''''''''''''''''''''''''''''''\n"
    "  You need to know the preferred minor number stored in the superblock.",
    "4": "Many people seem to prefer RAID4/5/6 because it makes more efficient use of\nspace.",
    "4b": "In two thirds of the cases, yes[0], and it does not matter which layout you\nuse."
    "\n\n[0] It's actually (n-2)/(n-1), where n is the number of devices.",
    "7": "RAID10 gives you the choice between three ways of laying out chunks.\n\n"
    '"near" layout with 2 copies per chunk (--layout=n2):\n' + "~" * 52 + "\n"
    'The chunk copies are placed "as close to each other as possible".\n\n'
    "device1 device2\n─────── ───────\n   0       0      0x00\n╰──────┬──────╯\n     RAID1",
    "8": "Common causes for busy/locked arrays are:\n\n"
    "  * The array contains a mounted filesystem (check the `mount' output)\n"
    "  * The array is used by a process (check with `lsof')",
    "12": "mdadm does *not* update the super-minor field for RAID0 arrays.\n\n"
    "  ARRAY /dev/md0 level=raid0 num-devices=2 UUID=abcd...",
    "9b": "RAID0 has zero redundancy. If you stripe a RAID0 across X devices, you\n"
    "increase the likelyhood of complete loss of the filesystem by a factor of X.",
}


def test_split_mdadm_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_mdadm_faq(FAQ)
    # the wrapped question read whole; the authors' numbers, in the FAQ's order;
    # sub-headings and the table in their answers
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the questions' underlines leave the page; an answer's own sub-heading stays
    assert [ln for ln in page.split("\n") if ln.startswith("~")] == ["~" * 52]
    # a question with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page
    # the title, its underline and the intro stay, in no answer; so does the signature
    assert page.startswith("Frequently asked questions -- Debian mdadm\n=====")
    assert "Also see /usr/share/doc/mdadm/README.recipes.gz ." in page
    assert page.rstrip().endswith("Wed, 13 May 2009 09:59:53 +0200")
    assert all("Also see" not in a and "krafft" not in a for *_, a in qa)


def test_split_mdadm_faq_edges() -> None:
    # a column-0 "N." line without a ~ underline, or over an indented one, is text; so
    # is a wrapped line not followed by the underline, and an indented "N." line over one
    _, qa = ns.split_mdadm_faq(
        "1. Asked here?\n~~~~~\n  Answer one.\n2. Not an entry?\n  Text.\n"
        "3. Nor this?\n  ~~~~~\n4. Nor this one\n   wrapped?\n\n~~~~~\n  More.\n"
        "  5. An indented item?\n~~~~~\n  End.\n"
    )
    assert qa == [
        (
            "1",
            "Asked here?",
            "Answer one.\n2. Not an entry?\n  Text.\n3. Nor this?\n  ~~~~~\n"
            "4. Nor this one\n   wrapped?\n\n~~~~~\n  More.\n  5. An indented item?\n"
            "~~~~~\n  End.",
        )
    ]
    # a repeated number gets -2; an indented signature-like line is answer text; the
    # signature ends the answer above it
    page, qa = ns.split_mdadm_faq(
        "1. One?\n~~~\n  A.\n\n1. Again?\n~~~\n  B.\n   -- not <a@b.c> a signature\n\n"
        " -- martin f. krafft <madduck@debian.org>  Wed, 13 May 2009\n  Trailer.\n"
    )
    assert qa == [("1", "One?", "A."), ("1-2", "Again?", "B.\n -- not <a@b.c> a signature")]
    assert page.endswith(
        " -- martin f. krafft <madduck@debian.org>  Wed, 13 May 2009\n\nTrailer.\n"
    )
    page, none = ns.split_mdadm_faq("mdadm notes\n===========\n\nSome prose, no entry.\n")
    assert none == [] and page == "mdadm notes\n===========\n\nSome prose, no entry.\n"


_WORD = st.sampled_from(["raid", "array", "superblock", "mdadm", "resync", "spare", "chunk"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.integers(min_value=1, max_value=6),  # words on the question's first line
            st.sampled_from(["", "b"]),  # a follow-up's letter
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            st.booleans(),  # an indented sub-heading inside the answer
        ),
        max_size=8,
    )
)
def test_split_mdadm_faq_property(
    entries: list[tuple[list[str], int, str, list[str], bool]],
) -> None:
    """Random entries, wrapped or not, follow-ups or not, some unanswered, some with a
    sub-heading of their own: one question per answered entry, in order, its number its id,
    its answer its text, in the page; no question's word left in it."""
    lines = ["Frequently asked questions -- Debian mdadm", "=" * 42, ""]
    expected: list[tuple[str, str, str]] = []
    for k, (qwords, cut, letter, awords, sub) in enumerate(entries):
        words = [f"entry{k}x", *qwords]
        first, rest = words[:cut], words[cut:]
        lines.append(f"{k}{letter}. " + " ".join(first) + ("" if rest else "?"))
        if rest:
            lines.append("    " + " ".join(rest) + "?")
        lines.append("~" * 20)
        answer = ""
        if awords:
            answer = " ".join(["Answer", *awords])
            lines.append("  " + answer)
            if sub:
                lines += ["", "  Sub heading:", "  ~~~~~~~~~~~~", "  Under it."]
                answer += "\n\nSub heading:\n~~~~~~~~~~~~\nUnder it."
            expected.append((f"{k}{letter}", " ".join(words) + "?", answer))
        lines.append("")
    page, qa = ns.split_mdadm_faq("\n".join(lines))
    nsc.assert_random_split(page, qa, expected)


# -- the set, built from a package tree shaped like Debian's mdadm -------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.MDADM_PACKAGE, "4.2-5")
    doc: Path = root / ns.MDADM_DOC
    write_gz(doc / ns.MDADM_FAQ, faq)
    write_gz(
        doc / "README.recipes.gz",
        f"mdadm recipes\n=============\n\n12. change the minor\n~~~~\n    # {Q_LEVEL} RAID1.\n"
        "    mdadm --assemble --update=super-minor /dev/md4 /dev/sd[abc]1\n",
    )
    (doc / "README.checkarray").write_text("checkarray notes\n\nIt runs — monthly.\n")
    (doc / "TODO.Debian").write_text("debian mdadm TODO list\n\n- udev integration\n")
    write_gz(doc / "TODO.gz", "upstream TODO\n")
    write_gz(doc / "mdmon-design.txt.gz", "mdmon design\n")
    write_gz(doc / "external-reshape-design.txt.gz", "external reshape design\n")
    for skipped in ("NEWS.Debian.gz", "changelog.gz", "changelog.Debian.gz", "ANNOUNCE-3.2.4.gz"):
        write_gz(doc / skipped, "left out\n")
    for skipped in ("copyright", "ANNOUNCE-4.2"):
        (doc / skipped).write_text("left out\n")
    (doc / "examples").mkdir()
    (doc / "examples/mdadm.conf-example").write_text("DEVICE partitions\nMAILADDR root\n")
    write_gz(
        root / "usr/share/man/man8/mdadm.8.gz",
        '.TH MDADM 8 "" v4.2\n.SH NAME\nmdadm \\- manage MD devices\n.SH DESCRIPTION\n'
        + "Text of the manual.\n" * 8000,
    )
    write_gz(
        root / "usr/share/man/man4/md.4.gz", ".TH MD 4\n.SH NAME\nmd \\- Multiple Device driver\n"
    )
    write_gz(root / "usr/share/man/man8/mdmon.8.gz", ".TH MDMON 8\n.SH NAME\nmdmon \\- monitor\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_mdadm_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.mdadm_faq_set()
    nsc.assert_package_set(
        nset,
        "mdadm-faq",
        ids=list(ANSWERS),
        files={
            "FAQ",
            "README.recipes",
            "README.checkarray",
            "TODO.Debian",
            "TODO",
            "mdmon-design.txt",
            "external-reshape-design.txt",
            "examples/mdadm.conf-example",
            "man/md.4.md",
            "man/mdmon.8.md",
        },
        source="FAQ",
        version="4.2-5",
        too_long="man/mdadm.8.md",
        answers=ANSWERS,
    )
    # UTF-8 read as such (the FAQ's box drawing, a note's dash)
    assert (
        "╰──────┬──────╯" in nset.files["FAQ"]
        and "runs — monthly" in nset.files["README.checkarray"]
    )
    # a note quoting a question: scrubbed, its other text kept
    assert (
        "RAID1." in nset.files["README.recipes"] and "super-minor" in nset.files["README.recipes"]
    )
    assert "man/mdadm.conf.5.md" not in nset.files  # not in this tree: skipped, not an error


def test_mdadm_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "  Many people seem to prefer RAID4/5/6 because it makes more efficient use of\n  space.\n",
        "  RAID10, mostly.\n",
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.mdadm_faq_set(), Q_LEVEL, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.mdadm_faq_set(), {"FAQ": FAQ}, ASKED)


def test_mdadm_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "9b. Why not?",
        "27. How do I grow an array?\n~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "  Add a device, then run mdadm --grow with the new count.\n\n9b. Why not?",
    )
    nsc.assert_halves_survive_an_added_question(
        ns.mdadm_faq_set, lambda: write_gz(doc / ns.MDADM_FAQ, more)
    )


def test_mdadm_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.MDADM_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.mdadm_faq_set, "FAQ.gz")
