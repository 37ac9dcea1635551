"""The ``sendmail-faq`` natural-question set (``bench/natural_sets.py``), its FAQ reader and the
question-leak check (``bench/check_question_leaks.py``) on a small inline FAQ shaped like
Debian's ``sendmail-doc`` (``/usr/share/doc/sendmail-doc/faq.txt.gz``: the comp.mail.sendmail
web FAQ rendered as plain text: a title, a "Top 5" list of numbers, a ``Table of Contents``
of every question; numbered upper-case sections, some on a ``sendmail.org`` logo line, each
with its own bulleted contents list and a rule; entries ``Q2.1 -- ``, ``Subject: Q2.2 -- ``
and section 5's indented, nested ``5.3.1.1 -- ``, wrapped, with ``Date:`` / ``Updated:``
lines under them, closed by rules; topic lines and withdrawn entries with no text; a
bibliography and a thanks section at the end) in a package tree laid out as the package
unpacks (the notes, libmilter's HTML pages, the two documents over the page limit, the files
left out; marker present, nothing downloaded); offline, no embedding model, no test reads
the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's own
entry lines, its contents lists, a note quoting one); each answer is exactly the text under
its question up to the next rule, entry or section, the date lines out of it; a wrapped
question is read whole; an entry without text asks nothing; ids are the FAQ's numbers; an
answer too short to judge leaves the set but not the corpus's scrubbing; the halves hold
when an entry is added.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_GROUP = "What is this newsgroup?"
Q_SCOPE = "What is the scope of this FAQ and who is it written for?"
Q_RELAY = "How do I prevent Relaying Denied errors for my clients?"
Q_FORGED = 'What does "may be forged" mean?'
Q_LINE = 'How can I solve "line 273: replacement $3 out of bounds" errors?'
Q_LINUXCONF = "Why do I have so many sendmail problems after configuring sendmail with linuxconf?"
ASKED = (Q_GROUP, Q_SCOPE, Q_RELAY, Q_FORGED, Q_LINE, Q_LINUXCONF)

FAQ = f"""
                          Frequently Asked Questions

Last updated April 3, 2007
     _________________________________________________________________

Top 5 - the most frequently asked questions about sendmail

    1. Relaying denied: see 3.27
    5. POP / IMAP: see 4.19
     _________________________________________________________________

Table of Contents

     * 1. COPYRIGHT NOTICE / REDISTRIBUTION REQUIREMENTS
     * 2. INTRODUCTION / MISCELLANEOUS
          + 2.1 {Q_GROUP}
          + 2.2 What is the scope of this FAQ and who is it
            written for?
     * 3. VERSION 8 SPECIFIC ISSUES
          + 3.27 {Q_RELAY}
          + 3.38 {Q_FORGED}
     * 5. VENDOR/OS SPECIFIC SENDMAIL ISSUES
          + 5.1 Sun Microsystems SunOS/Solaris
               o 5.1.1 How can I solve "line 273: replacement $3 out of
                 bounds" errors?

   sendmail.org 1. COPYRIGHT NOTICE / REDISTRIBUTION REQUIREMENTS

   The entire contents of this document are copyright 1997 - 2000 by the
   Sendmail Consortium, all rights reserved.


   sendmail.org

                        2. INTRODUCTION / MISCELLANEOUS

     * 2.1 {Q_GROUP}
     * 2.2 What is the scope of this FAQ and who is it
       written for?
     _________________________________________________________________

Q2.1 -- {Q_GROUP}

   Date: May 28, 1996

   The Usenet newsgroup comp.mail.sendmail is dedicated to the discussion
   of the program named "sendmail" in all its various forms.
     _________________________________________________________________

Subject: Q2.2 -- What is the scope of this FAQ and who is it
written for?

   Date: April 9, 1997
   Updated: July 20, 2002

   This FAQ is strongly centered around version 8 sendmail.
   A message it quotes carries its own header:
        Date: Tue, 1 Apr 1997 10:00:00 -0500
     _________________________________________________________________

Q2.3 -- has been deprecated.
     _________________________________________________________________


   sendmail.org

                        3. VERSION 8 SPECIFIC ISSUES

     * 3.27 {Q_RELAY}
     * 3.38 {Q_FORGED}
     _________________________________________________________________

Q3.27 -- {Q_RELAY}

   Date: January 7, 1999

   Add the clients' addresses or networks to the access map:
m4 your.mc.file > /etc/mail/sendmail.cf
   and restart the daemon.
     _________________________________________________________________

Q3.38 -- {Q_FORGED}

   It means the reverse lookup of the connecting address did not match
   the name it gave; see 2.1 for where to ask about DNS.


   sendmail.org

                          4. GENERAL SENDMAIL ISSUES

   Issues that are not tied to one version.


   sendmail.org

                     5. VENDOR/OS SPECIFIC SENDMAIL ISSUES

     * 5.1 Sun Microsystems SunOS/Solaris
          + 5.1.1 How can I solve "line 273: replacement $3 out of
            bounds" errors?
     _________________________________________________________________

5.1 -- Sun Microsystems SunOS/Solaris
     _________________________________________________________________

  Q5.1.1 -- How can I solve "line 273: replacement $3 out of bounds" errors?

   Date: March 23, 1996

   V8 doesn't recognize the Sun "$%y" syntax; use a V8 configuration.
     _________________________________________________________________

5.3 -- Linux
     _________________________________________________________________

  5.3.1 -- Red Hat
     _________________________________________________________________

    5.3.1.1 -- Why do I have so many sendmail problems after configuring
    sendmail with linuxconf?

   Date: June 15, 2000

   Do not edit sendmail.cf with linuxconf. This tool and its module
   "mailconf" are broken.


   sendmail.org

       6. ADDITIONAL INFORMATION SOURCES (RFC 1807 bibliography format)

     * 6.1 Reference material devoted exclusively to sendmail
     _________________________________________________________________

Q6 -- Additional information sources

   Date: April 8, 1997

   TITLE::  sendmail, 2nd Edition


   sendmail.org 7. THANKS!

   Special thanks to Eric Allman.
"""
ANSWERS = {
    "2.1": (
        "The Usenet newsgroup comp.mail.sendmail is dedicated to the discussion\nof the program "
        'named "sendmail" in all its various forms.'
    ),
    "2.2": (
        "This FAQ is strongly centered around version 8 sendmail.\n"
        "A message it quotes carries its own header:\n"
        "     Date: Tue, 1 Apr 1997 10:00:00 -0500"
    ),
    "3.27": (
        # dedented by the block's least indent (the column-0 command line), then stripped
        "Add the clients' addresses or networks to the access map:\n"
        "m4 your.mc.file > /etc/mail/sendmail.cf\n"
        "   and restart the daemon."
    ),
    "3.38": (
        "It means the reverse lookup of the connecting address did not match\n"
        "the name it gave; see 2.1 for where to ask about DNS."
    ),
    "5.1.1": 'V8 doesn\'t recognize the Sun "$%y" syntax; use a V8 configuration.',
    "5.3.1.1": (
        'Do not edit sendmail.cf with linuxconf. This tool and its module\n"mailconf" are broken.'
    ),
}


def test_split_sendmail_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_sendmail_faq(FAQ)
    # every entry that has text asks its question, wrapped lines read whole, in order
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the contents lists (the file's and each section's) are gone with the questions
    assert "Table of Contents" not in page and "written for?" not in page
    assert "* 2.1" not in page and "6.1 Reference material" not in page
    # the sections stay as headings, the logo lines do not
    for title in (
        "1. COPYRIGHT NOTICE / REDISTRIBUTION REQUIREMENTS",
        "2. INTRODUCTION / MISCELLANEOUS",
        "4. GENERAL SENDMAIL ISSUES",
        "6. ADDITIONAL INFORMATION SOURCES (RFC 1807 bibliography format)",
        "7. THANKS!",
    ):
        assert f"\n{title}\n" in page
    assert "sendmail.org" not in page.replace("comp.mail.sendmail", "")
    # the date lines under a question stay in the page, in no answer; one quoted inside an
    # answer is the answer's
    assert "Date: May 28, 1996" in page and "Updated: July 20, 2002" in page
    assert all("1996" not in a and "Updated:" not in a for _, _, a in qa)
    # topic lines and a withdrawn entry ask nothing and stay as headings
    assert "5.1 -- Sun Microsystems SunOS/Solaris" in page and "5.3.1 -- Red Hat" in page
    assert "2.3 -- has been deprecated." in page
    # the top list, the copyright, the bibliography and the thanks are text, in no answer
    assert "Issues that are not tied to one version." in page
    # a numbered upper-case line that is not the next section's number is text
    assert "5. POP / IMAP: see 4.19" in page and page.index("POP / IMAP") < page.index("1. COPY")
    assert "Relaying denied: see 3.27" in page and "TITLE::  sendmail, 2nd Edition" in page
    assert "Special thanks to Eric Allman." in page
    for _, _, a in qa:
        assert "TITLE::" not in a and "Eric Allman" not in a and "VERSION 8" not in a


def test_split_sendmail_faq_edges() -> None:
    # an entry line right under text is text; a section number out of turn is text; a
    # rule ends the answer
    page, qa = ns.split_sendmail_faq(
        "   sendmail.org 1. FIRST\n\nQ1.1 -- Asked?\n\n   Answer one.\n"
        "   Q1.2 -- Not asked?\n\n   3. NOT A SECTION\n   More answer.\n"
        "     ______________________\n\n   After the rule.\n"
    )
    assert qa == [
        (
            "1.1",
            "Asked?",
            "Answer one.\nQ1.2 -- Not asked?\n\n3. NOT A SECTION\nMore answer.",
        )
    ]
    # the rule ends the answer: the text after it is the page's, in no answer
    assert page == (
        "1. FIRST\n\nAnswer one.\nQ1.2 -- Not asked?\n\n3. NOT A SECTION\nMore answer.\n\n"
        "After the rule.\n"
    )
    # an answer ends at the next entry without a rule; a repeated number gets -2
    _, repeated = ns.split_sendmail_faq(
        "Q4.1 -- One?\n\n   First.\n\nQ4.1 -- Again?\n   Wrapped?\n\n   Second.\n"
    )
    assert repeated == [("4.1", "One?", "First."), ("4.1-2", "Again? Wrapped?", "Second.")]
    # an entry at the end of the file with no text asks nothing
    page, none = ns.split_sendmail_faq("Q4.2 -- Nothing here?\n\n\n")
    assert none == [] and page == "4.2 -- Nothing here?\n"


_WORD = st.sampled_from(["relay", "mx", "queue", "alias", "masquerade", "milter", "dns", "cf"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=12),  # the question's words
                st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
                st.integers(min_value=2, max_value=8),  # words on the entry's first line
                st.booleans(),  # a Date line under the question
                st.booleans(),  # written "Subject: Q..."
            ),
            max_size=4,
        ),
        max_size=4,
    )
)
def test_split_sendmail_faq_property(
    sections: list[list[tuple[list[str], list[str], int, bool, bool]]],
) -> None:
    """Random sections of random entries, wrapped or not, dated or not, some unanswered:
    one question per answered entry, in order, its id the number, each answer its text, in
    the page, no question's word (nor a contents line) left in it."""
    lines = ["Frequently Asked Questions", "", "Table of Contents", ""]
    lines += [f"     * {s + 1}. SECTION {s + 1}" for s in range(len(sections))]
    expected: list[tuple[str, str, str]] = []
    for s, entries in enumerate(sections):
        lines += ["", "   sendmail.org", "", f"          {s + 1}. SECTION {s + 1}", ""]
        lines += [f"     * {s + 1}.{k + 1} entry{s}x{k}" for k in range(len(entries))]
        lines.append("     " + "_" * 60)
        for k, (qwords, awords, cut, dated, subject) in enumerate(entries):
            words = [f"entry{s}x{k}", *qwords]
            first, rest = words[:cut], words[cut:]
            lines += [
                "",
                ("Subject: " if subject else "") + f"Q{s + 1}.{k + 1} -- " + " ".join(first),
            ]
            if rest:
                lines.append(" ".join(rest) + "?")
            else:
                lines[-1] += "?"
            lines.append("")
            if dated:
                lines += ["   Date: May 28, 1996", ""]
            if awords:
                lines.append("   " + " ".join(["Answer", *awords]))
                expected.append(
                    (f"{s + 1}.{k + 1}", " ".join(words) + "?", " ".join(["Answer", *awords]))
                )
            lines.append("     " + "_" * 60)
    page, qa = ns.split_sendmail_faq("\n".join(lines))
    assert qa == expected
    for _, _, a in qa:
        assert a in page
    # an answered entry's question leaves the page; one with no text stays as a heading
    left = set(re.findall(r"entry\d+x\d+", page))
    answered = {q.split()[0] for _, q, _ in qa}
    assert not left & answered
    assert all(f"-- {word} " in page or f"-- {word}?" in page for word in left)
    assert "Table of Contents" not in page and "* " not in page


# -- the set, built from a package tree shaped like Debian's sendmail-doc -------------------

MILTER_INDEX = f"""<HTML><HEAD><TITLE>Filtering Mail with Sendmail</TITLE></HEAD><BODY>
<H1>Filtering Mail with Sendmail</H1>
<H2>Introduction</H2>
<P>Sendmail's Content Management API (milter) lets programs examine mail.
{Q_FORGED} Milters see the same reverse lookup result.
</BODY></HTML>
"""
MILTER_PAGE = """<HTML><HEAD><TITLE>smfi_main</TITLE></HEAD><BODY>
<H1>smfi_main</H1>
<P>Hand control to libmilter's event loop.
</BODY></HTML>
"""


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SENDMAIL_PACKAGE, "8.17.1.9-2+deb12u2")
    doc: Path = root / ns.SENDMAIL_DOC
    write_gz(doc / ns.SENDMAIL_FAQ, faq + "   CONTACT::  Claus A\u00dfmann\n")
    write_gz(doc / "README.gz", f"SENDMAIL RELEASE 8\n\n{Q_RELAY} Read the FAQ. Build it first.\n")
    (doc / "README.Debian").write_text("Debian's sendmail: see Debian-specific.\n")
    write_gz(doc / "KNOWNBUGS.gz", "Known bugs in sendmail 8.17.\n")
    write_gz(doc / "sendmail/README.gz", "This directory contains the source for sendmail.\n")
    (doc / "sendmail/TRACEFLAGS").write_text("0, 1 main.c\n")
    write_gz(doc / "cf.README.gz", "SENDMAIL CONFIGURATION FILES\n" + "feature text. " * 11_000)
    write_gz(doc / "op/op.txt.gz", "SENDMAIL INSTALLATION AND OPERATION GUIDE\n" + "x y. " * 31_000)
    for skipped in ("changelog.gz", "changelog.Debian.gz", "NEWS.Debian.gz", "op/op.ps.gz"):
        write_gz(doc / skipped, "left out\n")
    (doc / "copyright").write_text("left out\n")
    html = doc / ns.SENDMAIL_MILTER_HTML
    html.mkdir(parents=True)
    (html / "index.html").write_text(MILTER_INDEX)
    (html / "smfi_main.html").write_text(MILTER_PAGE)
    (html / "figure1.jpg").write_bytes(b"\xff\xd8\xff\xe0 not text")
    return doc


def test_sendmail_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.sendmail_faq_set()
    assert [q.qid for q in nset.questions] == [f"sendmail-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == {
        "faq.txt",
        "README",
        "README.Debian",
        "KNOWNBUGS",
        "sendmail/README",
        "sendmail/TRACEFLAGS",
        "libmilter/html/index.md",
        "libmilter/html/smfi_main.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    # a note and a milter page quoting a question: scrubbed, their other text kept
    assert "Read the FAQ. Build it first." in nset.files["README"]
    assert "Milters see the same reverse lookup result." in nset.files["libmilter/html/index.md"]
    assert "Hand control to libmilter's event loop." in nset.files["libmilter/html/smfi_main.md"]
    assert "<P>" not in nset.files["libmilter/html/smfi_main.md"]
    # the FAQ read as UTF-8
    assert "Claus A\u00dfmann" in nset.files["faq.txt"]
    nsc.assert_files_as_written(nset)
    assert "8.17.1.9-2+deb12u2" in nset.note and "libmilter's 2 HTML pages" in nset.note
    assert "over 150000 chars: cf.README, op/op.txt;" in nset.note
    assert "(README, README.Debian, KNOWNBUGS, sendmail/README, sendmail/TRACEFLAGS)" in nset.note
    nsc.assert_held_out("sendmail-faq")


def test_sendmail_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ.replace(
        "   It means the reverse lookup of the connecting address did not match\n"
        "   the name it gave; see 2.1 for where to ask about DNS.\n",
        "   See the forged page.\n",
    )
    _package(tmp_path, monkeypatch, faq)
    nset = ns.sendmail_faq_set()
    nsc.assert_left_out(nset, Q_FORGED, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ as
    shipped (wrapped ones included: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.sendmail_faq_set()
    asked = nsc.leak_checked(nset, {"faq.txt": FAQ}, is_html=True, exact=True)
    assert sorted(asked) == sorted(ASKED)


def test_sendmail_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.sendmail_faq_set)
    more = FAQ.replace(
        "Q3.38 -- ",
        "Q3.39 -- How do I send using an alternate port?\n\n   Define the port in the "
        "mailer's arguments and rebuild the configuration.\n"
        "     _________________________________________________________________\n\nQ3.38 -- ",
    )
    write_gz(doc / ns.SENDMAIL_FAQ, more)
    nsc.assert_halves_kept(ns.sendmail_faq_set, first, dev, test)


def test_sendmail_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.SENDMAIL_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no faq.txt.gz under")):
        ns.sendmail_faq_set()
