"""The ``abcde-faq`` natural-question set (``bench/natural_sets.py``), its FAQ reader and the
question-leak check (``bench/check_question_leaks.py``) on a small inline FAQ shaped like
Debian's ``abcde`` (``/usr/share/doc/abcde/FAQ.gz``: plain text, sections titled by a
column-0 line over an indented line of ``=`` (one over ``-``), entries ``Q. <question>``
wrapped over indented lines, ``A. <answer>`` indented under its label, configuration
examples with ``#`` comments inside answers, a ``--`` line and the maintainer's name at the
end) in a package tree laid out as the package unpacks (the README, ``/etc/abcde.conf``,
two man pages, changelogs, ``examples/``; marker present, nothing downloaded); offline, no
embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's own lines,
the README or a man page quoting one); each answer is exactly the text after its ``A.``
label, up to the next question, section title or the signature; a wrapped question is read
whole; a question without an answer asks nothing; ids are the question's slug; an answer too
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

Q_WHO = "Who created abcde? Who develops it nowadays?"
Q_DISK = "Low on disk space?"
Q_FASTER = (
    "How can i make abcde encode faster? My CD reader is way faster than the pace it can "
    "encode my tracks."
)
Q_PROXY = "I need to go through an HTTP proxy for CDDB access."
Q_ALAC = "How do I encode to Apple Lossless Audio Codec (alac)?"
Q_NORMALIZE = "What happened with normalize?"
Q_KEEPWAVS = 'I set KEEPWAVS to "y" but abcde insists on erasing my directory.'
ASKED = (Q_WHO, Q_DISK, Q_FASTER, Q_PROXY, Q_ALAC, Q_NORMALIZE, Q_KEEPWAVS)

FAQ = f"""0. INTRODUCTION
   ============

Q. {Q_WHO}
A. It was originally created by Robert Woodcook. Steve maintains abcde
   nowadays; contact him by mail.


1. EXECUTION
   =========

Q. {Q_DISK}
A. abcde can schedule ripping and encoding to conserve disk space: use -l.
   WAVOUTPUTDIR can point to another disk.

Q. How can i make abcde encode faster? My CD reader is way faster than the pace
   it can encode my tracks.
A. abcde can take advantage of SMP systems, just like make. Try 'abcde -j 2'
   and it runs two encoder jobs while it rips the next track.

Q. Is this entry unanswered?

2. CDDB
   ====

CDDB is the database of discs abcde asks for track names.

Q. {Q_PROXY}
A. No problem, just export your http_proxy variable first so wget can see it.

3. FORMATS
   =======

Q. {Q_ALAC}
A. There are three ways to encode to alac. Set your ~/.abcde.conf as follows:

   # Give the path to the encoder here:
   AACENCODERSYNTAX=ffmpeg
   FFMPEGENCOPTS="-c:a alac"
   OUTPUTTYPE="m4a"

  And then sit back and enjoy the music.

6. MISC PROBLEMS
   =============

Q. {Q_NORMALIZE}

Normalize has changed its name under Debian: it is called normalize-audio
now, so change the name of the executable in your abcde.conf file.

OBSOLETE
--------
Q. I set KEEPWAVS to "y" but abcde insists on erasing my
   directory.
A. The default action set includes clean, which cleans the temp directory.
   UPDATE: KEEPWAVS unselects now the clean action.

--
Steve McIntyre <maintainer@example.org>
"""
ANSWERS = {
    "who-created-abcde-who-develops-it-nowada": (
        "It was originally created by Robert Woodcook. Steve maintains abcde\n"
        "nowadays; contact him by mail."
    ),
    "low-on-disk-space": (
        "abcde can schedule ripping and encoding to conserve disk space: use -l.\n"
        "WAVOUTPUTDIR can point to another disk."
    ),
    "how-can-i-make-abcde-encode-faster-my-cd": (
        "abcde can take advantage of SMP systems, just like make. Try 'abcde -j 2'\n"
        "and it runs two encoder jobs while it rips the next track."
    ),
    "i-need-to-go-through-an-http-proxy-for-c": (
        "No problem, just export your http_proxy variable first so wget can see it."
    ),
    "how-do-i-encode-to-apple-lossless-audio": (
        # dedented by the block's least indent: the closing line's two spaces
        "There are three ways to encode to alac. Set your ~/.abcde.conf as follows:\n\n"
        " # Give the path to the encoder here:\n"
        " AACENCODERSYNTAX=ffmpeg\n"
        ' FFMPEGENCOPTS="-c:a alac"\n'
        ' OUTPUTTYPE="m4a"\n\n'
        "And then sit back and enjoy the music."
    ),
    "what-happened-with-normalize": (
        "Normalize has changed its name under Debian: it is called normalize-audio\n"
        "now, so change the name of the executable in your abcde.conf file."
    ),
    "i-set-keepwavs-to-y-but-abcde-insists-on": (
        "The default action set includes clean, which cleans the temp directory.\n"
        "UPDATE: KEEPWAVS unselects now the clean action."
    ),
}


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_split_abcde_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_abcde_faq(FAQ)
    # the wrapped questions read whole; label dropped, each answer dedented
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # a question with no answer under it asks nothing, and leaves the page all the same
    assert "unanswered" not in page
    # section titles stay with their underlines; no answer runs into the next section
    for title in ("0. INTRODUCTION\n============", "2. CDDB\n====", "OBSOLETE\n--------"):
        assert title in page
    assert all("CDDB\n" not in a and "EXECUTION" not in a for _, _, a in qa)
    # a section's text before its first question is in the page and in no answer (not the
    # answer of the unanswered question before the title)
    assert "CDDB is the database" in page and all("database" not in a for _, _, a in qa)
    # the signature stays in the page and in no answer
    assert page.rstrip().endswith("--\n\nSteve McIntyre <maintainer@example.org>")
    assert all("McIntyre" not in a for _, _, a in qa)
    assert "Q." not in page and "A. " not in page


def test_split_abcde_faq_repeated_question_and_no_questions() -> None:
    twice = FAQ.replace("OBSOLETE\n", f"Q. {Q_DISK}\nA. Said again later on, in other words.\n\n")
    _, qa = ns.split_abcde_faq(twice)
    keys = [k for k, _, _ in qa]
    assert keys.count("low-on-disk-space") == 1 and keys.count("low-on-disk-space-2") == 1
    # no label: the answer starts after a blank line, indented or not; lines indented
    # right under the question (no blank) are the question's own
    _, unlabelled = ns.split_abcde_faq(
        "Q. Asked over\n   two lines?\n\n   Answered after a blank line, with no label at all.\n"
    )
    assert unlabelled == [
        (
            "asked-over-two-lines",
            "Asked over two lines?",
            "Answered after a blank line, with no label at all.",
        )
    ]
    text = "1. EXECUTION\n   =========\n\nSome prose, no entry.\n"
    page, none = ns.split_abcde_faq(text)
    assert none == [] and page == "1. EXECUTION\n=========\n\nSome prose, no entry.\n"


_WORD = st.sampled_from(["rip", "track", "encode", "disc", "tag", "flac", "ogg", "speed"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=12),  # the question's words
                st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
                st.integers(min_value=3, max_value=8),  # words on the question's first line
            ),
            max_size=4,
        ),
        max_size=4,
    )
)
def test_split_abcde_faq_property(sections: list[list[tuple[list[str], list[str], int]]]) -> None:
    """Random sections of random entries, some questions wrapped, some unanswered: one
    question per answered entry, in order, each answer its text, in the page, no question's
    line left in it, ids unique."""
    lines: list[str] = []
    expected: list[tuple[str, str]] = []
    for s, entries in enumerate(sections):
        lines += [f"{s}. SECTION{s}", "   " + "=" * 10, ""]
        for k, (qwords, awords, cut) in enumerate(entries):
            question = f"entry{s}x{k} " + " ".join(qwords) + "?"
            words = question.split()
            lines.append("Q. " + " ".join(words[:cut]))
            if words[cut:]:
                lines.append("   " + " ".join(words[cut:]))
            if awords:
                lines.append("A. " + " ".join(awords[:5]))
                if awords[5:]:
                    lines.append("   " + " ".join(awords[5:]))
                expected.append(
                    (
                        question,
                        "\n".join(filter(None, [" ".join(awords[:5]), " ".join(awords[5:])])),
                    )
                )
            lines.append("")
    page, qa = ns.split_abcde_faq("\n".join(lines))
    assert [(q, a) for _, q, a in qa] == expected
    assert len({k for k, _, _ in qa}) == len(qa)
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x\d+", page)


# -- the set, built from a package tree shaped like Debian's abcde --------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.ABCDE_PACKAGE, "2.9.3-1")
    doc: Path = root / ns.ABCDE_DOC
    write_gz(doc / ns.ABCDE_FAQ, faq)
    write_gz(
        doc / "README.gz",
        "ABCDE\n=====\n\nabcde grabs tracks off a CD and encodes them.\n"
        f"See the FAQ ({Q_NORMALIZE}) for the renamed tool.\n",
    )
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / ns.ABCDE_CONFIG).write_text(
        "# System defaults for abcde version 2.9.3\n#CDDBMETHOD=musicbrainz\n#OUTPUTTYPE=vorbis\n"
    )
    write_gz(doc / "changelog.gz", "abcde 2.9.3: small bug fixes\n")
    write_gz(doc / "changelog.Debian.gz", "abcde (2.9.3-1) unstable\n")
    (doc / "copyright").write_text("GPL-2+\n")
    write_gz(doc / "examples/autorip.sh.gz", "#!/bin/sh\nabcde -N\n")
    write_gz(
        root / "usr/share/man/man1/abcde.1.gz",
        ".TH ABCDE 1\n.SH NAME\nabcde \\- Grab an entire CD and compress it\n.SH OPTIONS\n"
        f".TP\n.B \\-j\n{Q_FASTER} Start that many encoder jobs at once.\n",
    )
    write_gz(
        root / "usr/share/man/man1/cddb-tool.1.gz",
        ".TH CDDB-TOOL 1\n.SH NAME\ncddb-tool \\- retrieve CDDB entries\n",
    )
    return doc


def test_abcde_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.abcde_faq_set()
    assert [q.qid for q in nset.questions] == [f"abcde-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == {
        "FAQ",
        "README",
        "abcde.conf",
        "man/abcde.1.md",
        "man/cddb-tool.1.md",
    }
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert " ".join(q.text.split()).lower() not in corpus
        assert q.answers[0][0] in nset.files[q.source]
        assert q.answers[0][0] == ANSWERS[q.qid.removeprefix("abcde-faq:")]
    # the README and a man page quoting a question: scrubbed, their other text kept
    assert "renamed tool" in nset.files["README"] and "normalize?" not in nset.files["README"]
    assert "Start that many encoder jobs at once." in nset.files["man/abcde.1.md"]
    assert "#CDDBMETHOD=musicbrainz" in nset.files["abcde.conf"]
    nsc.assert_files_as_written(nset)
    assert "2.9.3-1" in nset.note and "README, abcde.conf, abcde.1, cddb-tool.1" in nset.note
    nsc.assert_held_out("abcde-faq")


def test_abcde_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ.replace(
        "A. No problem, just export your http_proxy variable first so wget can see it.",
        "A. Export http_proxy.",
    )
    _package(tmp_path, monkeypatch, faq)
    nset = ns.abcde_faq_set()
    assert nset.left_out == (Q_PROXY,)
    assert Q_PROXY in nset.note
    assert len(nset.questions) == len(ASKED) - 1
    assert Q_PROXY.lower() not in _corpus(nset.files)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ as
    shipped (wrapped questions included: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.abcde_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"FAQ": FAQ}, asked, True)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(ASKED)


def test_abcde_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.abcde_faq_set)
    more = FAQ.replace(
        "2. CDDB\n",
        "Q. How do I rip only some tracks?\nA. Name the track numbers after the options.\n\n"
        "2. CDDB\n",
    )
    write_gz(doc / ns.ABCDE_FAQ, more)
    nsc.assert_halves_kept(ns.abcde_faq_set, first, dev, test)


def test_abcde_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.ABCDE_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no FAQ.gz under")):
        ns.abcde_faq_set()
