"""The ``allegro-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Allegro 4's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``) on
a small inline FAQ shaped as Debian's ``allegro4-doc`` ships it (``faq.txt.gz``: an
ASCII-art title, a note at column 0, groups under banners of ``=`` rules round their titles,
questions indented three spaces, some wrapped over two lines or two questions asked
together, answers indented six, some after a blank line, with code; a group's opening
paragraph indented three that asks nothing; a question asked again in a later group; an
answer quoting another question) beside the manual's chapter pages (``html/alleg*.html``,
one over the limit) and the notes, in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question is left in any file; each answer is exactly the
text after its question up to the next question or banner; the banners and the group
paragraphs stay, in no answer; ids are the questions' slugs, so an entry added keeps the
halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_WHERE = "Where can I get it?"
Q_SUE = "I took your code. Will you sue me? Your library destroyed my PC. Who do I sue?"
Q_ENV = 'I get an "out of environment space" error when I run fix.bat or vcvars32.bat!'
Q_DGA = (
    'When I try to use DGA2, I get "resolution not supported", but the X server does '
    "actually support that resolution !"
)
Q_CPP = "I get lots of errors when I try to compile my C++ Allegro program."
Q_SPEED = "How can I make my game run at the same speed on any computer?"
FAQ = """                ___  _ _
               / _ \\| | | ___  __ _ _ __ ___
              |_| |_|_|_|\\___|\\__, |_|  \\___/



Note that this FAQ list is rather old, and much of it won't apply to
Allegro 4.4.  Still, you might find some useful hints here.



==========================================
============ Trivial problems ============
==========================================


   Where can I get it?
      From the Allegro homepage, http://alleg.sourceforge.net/, or from
      your distribution's packages.




==============================================
============ The giftware licence ============
==============================================

   The Allegro licence is absolutely clear unless you are a lawyer.
   However, it's written quite informally.


   I took your code. Will you sue me?
   Your library destroyed my PC. Who do I sue?
      We are programmers not lawyers. Given the license, which allows
      everything, we really don't see how there could be any problems.



========================================
============ DOS problems ============
========================================


   I get an "out of environment space" error when I run fix.bat or
   vcvars32.bat!

      Well duh, you need to increase the size of your environment then :-)
      You can do this in your config.sys file (eg. shell=c:\\command.com /e:8192 /p).



==========================================
============ Unix problems ============
==========================================


   I get an "out of environment space" error when I run fix.bat or
   vcvars32.bat!

      Well duh, you need to increase the size of your environment then :-)
      You can do this in your config.sys file (eg. shell=c:\\command.com /e:8192 /p).


   When I try to use DGA2, I get "resolution not supported", but the
   X server does actually support that resolution !

      Your X server probably needs the mode in its configuration. See
      "I get lots of errors when I try to compile my C++ Allegro program."
      for an unrelated problem.


   I get lots of errors when I try to compile my C++ Allegro program.

      You are probably declaring the use of a namespace before including
      Allegro headers. For example:

      #include <iostream>
      using namespace std;

      #include <allegro.h>


==========================================
============ General problems ============
==========================================


   How can I make my game run at the same speed on any computer?

      Use a timer interrupt to update a counter, and run your game logic
      once for every tick of the counter.
"""
A_WHERE = (
    "From the Allegro homepage, http://alleg.sourceforge.net/, or from\n"
    "      your distribution's packages."
)
A_SUE = (
    "We are programmers not lawyers. Given the license, which allows\n"
    "      everything, we really don't see how there could be any problems."
)
A_ENV = (
    "Well duh, you need to increase the size of your environment then :-)\n"
    "      You can do this in your config.sys file (eg. shell=c:\\command.com /e:8192 /p)."
)
A_DGA = (
    "Your X server probably needs the mode in its configuration. See\n"
    '      "I get lots of errors when I try to compile my C++ Allegro program."\n'
    "      for an unrelated problem."
)
A_CPP = (
    "You are probably declaring the use of a namespace before including\n"
    "      Allegro headers. For example:\n\n      #include <iostream>\n"
    "      using namespace std;\n\n      #include <allegro.h>"
)
A_SPEED = (
    "Use a timer interrupt to update a counter, and run your game logic\n"
    "      once for every tick of the counter."
)
ASKED = (Q_WHERE, Q_SUE, Q_ENV, Q_ENV, Q_DGA, Q_CPP, Q_SPEED)
ANSWERS = {
    "where-can-i-get-it": A_WHERE,
    "i-took-your-code-will-you-sue-me-your-li": A_SUE,
    "i-get-an-out-of-environment-space-error-": A_ENV,
    "i-get-an-out-of-environment-space-error--2": A_ENV,
    "when-i-try-to-use-dga2-i-get-resolution-": A_DGA,
    "i-get-lots-of-errors-when-i-try-to-compi": A_CPP,
    "how-can-i-make-my-game-run-at-the-same-s": A_SPEED,
}


def test_split_allegro_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_allegro_faq(FAQ)
    # each run of lines indented three over a deeper-indented line asked, in order, its
    # lines joined (two questions asked together are one); the answer the text after it up
    # to the next question or banner, lines as written; the id its slug, a repeat -2
    assert [q for _, q, _ in qa] == list(ASKED)
    assert [k for k, _, _ in qa] == list(ANSWERS)
    assert {k: a for k, _, a in qa} == ANSWERS
    for _, q, a in qa:
        assert a in page
        if q != Q_CPP:
            assert nsc.flat(q) not in nsc.flat(page)
    # the title, the note, every banner and the group's opening paragraph stay, in no
    # answer; a question quoted in an answer stays there (the set's scrubbing takes it)
    assert nsc.flat(page).count(nsc.flat(Q_CPP)) == 1
    assert "Note that this FAQ list is rather old" in page
    assert "The Allegro licence is absolutely clear" in page
    for title in ("Trivial problems", "The giftware licence", "Unix problems", "General"):
        assert page.count(f"============ {title}") == 1
    assert page.count("=" * 40) == 10
    assert "DOS problems ============\n========================================" in page
    for _, _, a in qa:
        assert "====" not in a and "licence is absolutely" not in a and "rather old" not in a


def test_split_allegro_faq_edges() -> None:
    # no question: the text kept, nothing asked; a run with nothing deeper under it (a
    # banner, the end, a column-0 line, another run) asks nothing and stays; an answer ends
    # at a banner; a question with only blank lines under it before a banner asks nothing
    assert ns.split_allegro_faq("Just a note.\n") == ("Just a note.\n", [])
    page, qa = ns.split_allegro_faq("   Asked?\n      Yes.\n   Not asked.\n")
    assert qa == [("asked", "Asked?", "Yes.")] and "   Not asked." in page
    page, qa = ns.split_allegro_faq("   Para.\n\n   Q?\n\n      A.\n====\n   Trailing?\n")
    assert qa == [("q", "Q?", "A.")] and "Para." in page and "Trailing?" in page
    page, qa = ns.split_allegro_faq("   Q?\n      A.\nColumn zero.\n   R?\n\n====\n")
    assert qa == [("q", "Q?", "A.\nColumn zero.")] and "R?" in page and "====" in page
    page, qa = ns.split_allegro_faq("   Bare?\nColumn zero.\n")
    assert qa == [] and page == "Bare?\nColumn zero.\n"
    page, qa = ns.split_allegro_faq("    Four spaces?\n      Deeper.\n")
    assert qa == [] and "Four spaces?" in page


_WORD = st.sampled_from(["bitmap", "palette", "make", "djgpp", "sound", "timer", "sprite"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a banner before the entry
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.integers(min_value=1, max_value=3),  # lines the question is wrapped over
            st.integers(min_value=0, max_value=2),  # blank lines between question and answer
            st.lists(_WORD, min_size=0, max_size=10),  # the answer's words (none: a paragraph)
        ),
        min_size=1,
        max_size=7,
    ),
)
def test_split_allegro_faq_property(
    entries: list[tuple[bool, list[str], int, int, list[str]]],
) -> None:
    """Random entries, some after a banner, each question wrapped over one to three lines,
    some with no answer (a paragraph that asks nothing): one question per answered entry,
    in order, its slug the id (repeats ``-2``), the answer the text after it, in the page;
    no asked question left; banners and unanswered paragraphs kept, in no answer."""
    text = "   ___ title art ___\n\nA note at column 0.\n\n"
    expected: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for n, (banner, qwords, wrap, blanks, awords) in enumerate(entries):
        if banner:
            text += f"\n{'=' * 20}\n====== group{n}title ======\n{'=' * 20}\n\n"
        words = [f"entry{n}x", *qwords]
        lines = [" ".join(words[i::wrap]) for i in range(wrap) if words[i::wrap]]
        text += "".join(f"   {line}\n" for line in lines) + "\n" * blanks
        if awords:
            answer = " ".join(["Answer", *awords]) + "."
            text += f"      {answer}\n\n\n"
            question = " ".join(lines)
            slug = ns._slug(question)
            seen[slug] = seen.get(slug, 0) + 1
            key = slug if seen[slug] == 1 else f"{slug}-{seen[slug]}"
            expected.append((key, question, answer))
        else:
            text += "\n"
    page, qa = ns.split_allegro_faq(text)
    unanswered = [n for n, e in enumerate(entries) if not e[4]]
    for n in unanswered:
        assert f"entry{n}x" in page
    if not unanswered:
        nsc.assert_random_split(page, qa, expected)
    assert qa == expected
    for _, _, a in qa:
        assert a in page and "title" not in a and "note at column" not in a
    for _, q, _ in qa:
        assert nsc.flat(q) not in nsc.flat(page)
    for n, e in enumerate(entries):
        if e[0]:
            assert page.count(f"group{n}title") == 1
    assert "A note at column 0." in page and "title art" in page


# -- the set, built from a package tree shaped like Debian's allegro4-doc -------------------


def _chapter(title: str, body: str) -> str:
    return (
        f'<html><head><title>\nAllegro Manual: {title}\n</title>\n<meta http-equiv="Content-Type"'
        ' content="text/html; charset=iso-8859-1"></head><body>\n'
        f'<h1><a name="{title}">{title}</a></h1>\n<p>{body}</p>\n</body></html>\n'
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.ALLEGRO_PACKAGE, "2:4.4.3.1-3")
    doc: Path = root / ns.ALLEGRO_DOC
    write_gz(doc / ns.ALLEGRO_FAQ, faq)
    html = doc / ns.ALLEGRO_HTML
    html.mkdir(parents=True)
    (html / "alleg000.html").write_text(
        _chapter("Using Allegro", "allegro_init initialises the library.")
    )
    (html / "alleg001.html").write_text(
        _chapter("Timer routines", f"Users ask: {Q_SPEED} install_int_ex sets a timer.")
    )
    (html / "alleg002.html").write_text(_chapter("Huge", "A function. " * 15_000))
    for other in ("faq.html", "index.html", "allegro.html", "readme.html", "changes.html"):
        (html / other).write_text(_chapter("left out", "left out"))
    write_gz(doc / "readme.txt.gz", "Allegro is a game programming library.\n")
    (doc / "mistakes.txt").write_text("Common mistakes: forgetting END_OF_MAIN().\n")
    (doc / "README.Debian").write_text("compile_examples.sh builds the examples.\n")
    write_gz(doc / "allegro.txt.gz", "left out\n")
    write_gz(doc / "AUTHORS.gz", "left out\n")
    (doc / "THANKS").write_text("left out\n")
    write_gz(doc / "CHANGES.gz", "left out\n")
    write_gz(doc / "changelog.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    write_gz(root / "usr/share/man/man3/install_int.3alleg4.gz", ".TH X 3\nleft out\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_allegro_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.allegro_faq_set()
    scrubbed = dict(ANSWERS)
    scrubbed["when-i-try-to-use-dga2-i-get-resolution-"] = A_DGA.replace(Q_CPP, "")
    nsc.assert_package_set(
        nset,
        "allegro-faq",
        ids=list(ANSWERS),
        files={
            "faq.txt",
            "manual/alleg000.md",
            "manual/alleg001.md",
            "readme.txt",
            "mistakes.txt",
            "README.Debian",
        },
        source="faq.txt",
        version="2:4.4.3.1-3",
        too_long="alleg002.html",
        answers=scrubbed,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the chapter quoting a question scrubbed, its other text kept; the notes as text
    assert "install_int_ex sets a timer." in nset.files["manual/alleg001.md"]
    assert Q_SPEED not in nset.files["manual/alleg001.md"]
    assert "# Using Allegro" in nset.files["manual/alleg000.md"]
    assert "game programming library" in nset.files["readme.txt"]
    assert "END_OF_MAIN" in nset.files["mistakes.txt"]
    assert nset.left_out == ()


def test_allegro_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(A_SPEED, "Use a timer.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.allegro_faq_set(), Q_SPEED, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    shipped = {"faq.txt": " ".join(FAQ.split())}
    nsc.assert_leak_checked(ns.allegro_faq_set(), shipped, ASKED)


def test_allegro_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        "\n   How can I make my game",
        "\n   How can I generate a random number?\n"
        "      Call rand() and take the remainder by the range you want.\n\n"
        "\n   How can I make my game",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.allegro_faq_set, lambda: write_gz(doc_dir / ns.ALLEGRO_FAQ, more)
    )


def test_allegro_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.ALLEGRO_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.allegro_faq_set, ns.ALLEGRO_FAQ)
