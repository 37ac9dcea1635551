"""The ``x11vnc-faq`` natural-question set (``bench/natural_sets.py``), its reading of
x11vnc's README (the author's web pages dumped as one text, the FAQ page one of them) and the
question-leak check (``bench/check_question_leaks.py``) on a small inline README shaped as
Debian's ``x11vnc`` ships it (``/usr/share/doc/x11vnc/README.gz``: a preamble; pages opening
with their address ``http://www.karlrunge.com/x11vnc/<name>.html:`` at column 0, later ones
after a rule of ``=``; the FAQ page: its title, a contents list of ``[Group]`` titles over
every ``Q-N:`` question again, a rule of underscores, then the groups over their entries,
questions wrapped, answers with an ``[image.gif]`` line, a rule and a command at column 2,
one answer following its question with no blank line, one too short to judge; a page
quoting a question; the options page over the limit) beside the man pages, in a package tree
laid out as the package unpacks (marker present, nothing downloaded); offline, no
embedding model, no test reads the real package.

What the set's numbers rest on: no question's text (or the contents list holding them all)
is left in any file; each answer is exactly the text after its question up to the next
question or group, in its group's page; the README is cut at its pages and the FAQ at its
groups, so no page is over the limit but the one the note names; ids are the FAQ's numbers,
so an entry added keeps the halves.
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

Q1 = (
    'I can\'t get x11vnc to start up. It says "XOpenDisplay failed (null)" and then exits. '
    "What do I need to do?"
)
Q2 = "How can I see all of x11vnc's command line options and documentation on how to use them?"
Q3_UNASKED = "Can I create and use my own SSL Certificate Authority (CA) with x11vnc?"
Q4 = "The X display is 8bpp indexed color and the colors in my viewer are messed up."
Q5_SHORT = "Does x11vnc work with IPv6?"
ASKED = (Q1, Q2, Q4, Q5_SHORT)
A1 = (
    "   For the former error, you need to specify the X display to connect to.\n"
    "   Set your DISPLAY environment variable (or use the -display option).\n"
    "\n"
    "   [ssvnc.gif]\n"
    "\n"
    "   Example solution:\n"
    "  x11vnc -display :0 -auth /var/gdm/:0.Xauth\n"
    "     _________________________________________________________________\n"
    "\n"
    "   Note as of Feb/2007 you can also try the -find option."
)
A2 = "   Run: x11vnc -opts to list the options and x11vnc -help for long\n   descriptions."
A4 = (
    "   Use the -flashcmap option to have the whole colormap flash in when\n"
    "   the mouse moves into a window with a private colormap.\n"
    "\n"
    "   [x-click-but04.gif]-Submit"
)
A5 = "   Yes, it does."
ANSWERS = {"Q-1": A1, "Q-2": A2, "Q-4": A4}
GROUP1 = "faq/01-building-and-starting.txt"
GROUP2 = "faq/02-color-issues.txt"

README = f"""This is x11vnc with its development continued by LibVNC and the GitHub community.

x11vnc README file                         Date: Mon Dec 27 20:58:57 EST 2010

The following information is taken from these URLs:

\thttp://www.karlrunge.com/x11vnc/index.html
\t...

\t
http://www.karlrunge.com/x11vnc/index.html:


# x11vnc: a VNC server for real X displays

   x11vnc allows one to view remotely and interact with real X displays.
   People often ask: I can't get x11vnc to start up. It says "XOpenDisplay
   failed (null)" and then exits. What do I need to do? Read the FAQ.

http://www.karlrunge.com/x11vnc/faq.html:


#   x11vnc FAQ:


   [Building and Starting]

   Q-1: I can't get x11vnc to start up. It says "XOpenDisplay failed
   (null)" and then exits. What do I need to do?

   Q-2: How can I see all of x11vnc's command line options and
   documentation on how to use them?

   [Color Issues]

   Q-3: Can I create and use my own SSL Certificate Authority (CA) with
   x11vnc?

   Q-4: The X display is 8bpp indexed color and the colors in my viewer
   are messed up.

   Q-5: Does x11vnc work with IPv6?
     _________________________________________________________________


   [Building and Starting]

   Q-1: I can't get x11vnc to start up. It says "XOpenDisplay failed
   (null)" and then exits. What do I need to do?

{A1}

   Q-2: How can I see all of x11vnc's command line options and
   documentation on how to use them?

{A2}


   [Color Issues]

   Q-3: Can I create and use my own SSL Certificate Authority (CA) with
   x11vnc?
   Yes, see this page for the utility commands x11vnc provides.

   Q-4: The X display is 8bpp indexed color and the colors in my viewer
   are messed up.

{A4}

   Q-5: Does x11vnc work with IPv6?

{A5}
\t
=======================================================================
http://www.karlrunge.com/x11vnc/ssl.html:


   SSL tunnels: use the -ssl option with a certificate.
\t
=======================================================================
http://www.karlrunge.com/x11vnc/x11vnc_opts.html:


{"   -display disp   X11 server display to connect to." * 3000}
"""


def test_split_x11vnc_readme_pages_questions_and_answers() -> None:
    pages, qa = ns.split_x11vnc_readme(README)
    # the README cut at its pages (address lines and = rules out), the FAQ page at its
    # groups (one page each, in the FAQ's order); the contents list and the page's title
    # dropped; Q-3 (its answer follows the question with no blank line) asks nothing and
    # stays as text; an image line after an answer is that answer's text
    assert set(pages) == {
        "README-preamble.txt",
        "index.txt",
        GROUP1,
        GROUP2,
        "ssl.txt",
        "x11vnc_opts.txt",
    }
    assert [(k, q, where) for k, q, _, where in qa] == [
        ("Q-1", Q1, GROUP1),
        ("Q-2", Q2, GROUP1),
        ("Q-4", Q4, GROUP2),
        ("Q-5", Q5_SHORT, GROUP2),
    ]
    answers = {k: a for k, _, a, _ in qa}
    assert answers == {**ANSWERS, "Q-5": A5}
    for _, q, a, where in qa:
        assert a in pages[where]
        assert nsc.flat(q) not in nsc.flat(" ".join(pages.values())[:0] + pages[where])
    assert pages[GROUP1].startswith("[Building and Starting]\n")
    assert pages[GROUP2].startswith("[Color Issues]\n")
    assert "Q-3: Can I create" in pages[GROUP2] and "utility commands" in pages[GROUP2]
    faq = pages[GROUP1] + pages[GROUP2]
    assert "x11vnc FAQ:" not in faq and "Q-1:" not in faq and "Q-5:" not in faq
    assert "____" in pages[GROUP1]  # the rule inside an answer stays
    assert "http://" not in " ".join(pages.values()).replace("\thttp://", "")
    assert "=====" not in " ".join(pages.values())
    assert pages["ssl.txt"] == "SSL tunnels: use the -ssl option with a certificate.\n"
    assert pages["README-preamble.txt"].startswith("This is x11vnc with")
    assert "[ssvnc.gif]" in answers["Q-1"]  # an image line is text, not a group


def test_split_x11vnc_edges() -> None:
    # no page address: all preamble; a page named twice -2; a FAQ with no rule (no contents
    # list to drop): its groups read from every line, its entries asked
    assert ns.split_x11vnc_readme("Just text.\n") == ({"README-preamble.txt": "Just text.\n"}, [])
    pages, qa = ns.split_x11vnc_readme(
        "http://h/x/a.html:\none\nhttp://h/x/a.html:\ntwo\nhttps://h/x/b:\nthree\n"
    )
    assert pages == {"a.txt": "one\n", "a-2.txt": "two\n", "b.txt": "three\n"} and qa == []
    pages, qa = ns.split_x11vnc_faq(["   [G]", "", "   Q-1: Why?", "", "   Because."])
    assert qa == [("Q-1", "Why?", "   Because.", "faq/01-g.txt")]
    assert pages == {"faq/01-g.txt": "[G]\n\n   Because.\n"}
    # a group not in the contents list is text; text before the first group goes to it;
    # a repeated number -2; an unanswered last question stays as text
    lines = [
        "   [G]",
        "   Q-1: A?",
        "   ____________",
        "intro text",
        "   [Other]",
        "   [G]",
        "   Q-1: A?",
        "",
        "   one",
        "   Q-1: B?",
        "",
        "   two",
        "   Q-2: Last?",
    ]
    pages, qa = ns.split_x11vnc_faq(lines)
    assert qa == [
        ("Q-1", "A?", "   one", "faq/01-g.txt"),
        ("Q-1-2", "B?", "   two", "faq/01-g.txt"),
    ]
    assert pages == {
        "faq/01-g.txt": "intro text\n   [Other]\n[G]\n\n   one\n\n   two\n\n   Q-2: Last?\n"
    }


_WORD = st.sampled_from(["vnc", "display", "ssl", "xauth", "viewer", "cursor", "tunnel"])
_GROUPS = ["Building and Starting", "Color Issues", "Mouse Pointer", "Sun Rays", "Misc"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=12),  # the question's words
                st.integers(min_value=1, max_value=3),  # its lines
                st.lists(_WORD, min_size=0, max_size=12),  # the answer (none: unanswered)
                st.booleans(),  # an image line / rule in the answer
            ),
            min_size=0,
            max_size=4,
        ),
        min_size=1,
        max_size=len(_GROUPS),
    )
)
def test_split_x11vnc_faq_property(
    groups: list[list[tuple[list[str], int, list[str], bool]]],
) -> None:
    """Random groups of entries after the contents list, questions wrapped over one to
    three lines, some unanswered, some answers holding an image line and a rule: one
    question per answered entry, in order, ``Q-N`` its id, its group's page its source, the
    answer exactly the text after it, in that page; no question or contents line left;
    an unanswered question's text kept as text."""
    contents = ["#   x11vnc FAQ:", ""]
    body: list[str] = []
    expected = []
    unanswered = []
    n = 0
    for g, entries in enumerate(groups):
        title = _GROUPS[g]
        contents += [f"   [{title}]", ""]
        body += [f"   [{title}]", ""]
        for qwords, nlines, awords, extra in entries:
            n += 1
            words = [f"entry{n}x", *qwords]
            step = max(1, -(-len(words) // nlines))
            qlines = [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
            question = " ".join(words) + "?"
            qlines[-1] += "?"
            contents += [f"   Q-{n}: {qlines[0]}", *[f"   {x}" for x in qlines[1:]], ""]
            body += [f"   Q-{n}: {qlines[0]}", *[f"   {x}" for x in qlines[1:]], ""]
            if awords:
                answer = ["   Answer " + " ".join(awords)]
                if extra:
                    answer += ["", "   [picture.gif]", "     ____________", "  cmd -x"]
                body += [*answer, "", ""]
                expected.append(
                    (f"Q-{n}", question, "\n".join(answer), ns._x11vnc_group_name(g + 1, title))
                )
            else:
                unanswered.append(f"entry{n}x")
    contents.append("     _________________________________________________________________")
    pages, qa = ns.split_x11vnc_faq([*contents, "", *body])
    assert qa == expected
    for _, _, a, where in qa:
        assert a in pages[where]
    text = "\n".join(pages.values())
    asked_markers = {q.split()[0] for _, q, _, _ in qa}
    for marker in asked_markers:
        assert marker not in text
    for marker in unanswered:  # the entry's text, not the contents list's
        assert len(re.findall(rf"\b{marker}\b", text)) == 1
    assert "x11vnc FAQ:" not in text
    assert len(pages) == len(groups)


# -- the set, built from a package tree shaped like Debian's x11vnc ------------------------


def _man(name: str, section: int, body: str) -> str:
    head = f'.TH {name.upper()} {section} "2010"\n.SH NAME\n{name} \\- a program\n'
    return f"{head}.SH DESCRIPTION\n{body}"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, readme: str = README) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.X11VNC_PACKAGE, "0.9.16-9")
    doc: Path = root / ns.X11VNC_DOC
    write_gz(doc / ns.X11VNC_README, readme)
    for left_out in ("NEWS.gz", "changelog.gz", "changelog.Debian.gz"):
        write_gz(doc / left_out, "left out\n")
    (doc / "copyright").write_text("left out\n")
    write_gz(root / "usr/share/man/man1/x11vnc.1.gz", _man("x11vnc", 1, "Exports a display.\n"))
    write_gz(root / "usr/share/man/man8/Xdummy.8.gz", _man("Xdummy", 8, "A dummy X server.\n"))
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the README :data:`README`), its doc folder."""
    return _package(tmp_path, monkeypatch)


def test_x11vnc_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.x11vnc_faq_set()
    assert [q.source for q in nset.questions] == [GROUP1, GROUP1, GROUP2]
    assert [q.qid for q in nset.questions] == [f"x11vnc-faq:{k}" for k in ANSWERS]
    assert set(nset.files) == {
        "README-preamble.txt",
        "index.txt",
        GROUP1,
        GROUP2,
        "ssl.txt",
        "man/x11vnc.1.md",
        "man/Xdummy.8.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    nsc.assert_files_as_written(nset)
    assert "0.9.16-9" in nset.note and "over 150000 chars: x11vnc_opts.txt" in nset.note
    nsc.assert_held_out("x11vnc-faq")
    assert "left out" not in " ".join(nset.files.values())
    # the index page quoting a question scrubbed, its other text kept; the short answer
    # left out and named; the man pages as text
    assert "Read the FAQ." in nset.files["index.txt"]
    assert "XOpenDisplay" not in nset.files["index.txt"]
    assert nset.left_out == (Q5_SHORT,) and Q5_SHORT in nset.note
    assert "A dummy X server." in nset.files["man/Xdummy.8.md"]


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.x11vnc_faq_set(), {"README": README}, ASKED)


def test_x11vnc_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = README.replace(
        f"{A5}\n",
        f"{A5}\n\n   Q-6: Can x11vnc show a single application window?"
        "\n\n   Yes: use the -id option with the window's id from xwininfo.\n",
    )
    assert more != README
    nsc.assert_halves_survive_an_added_question(
        ns.x11vnc_faq_set, lambda: write_gz(doc / ns.X11VNC_README, more)
    )


def test_x11vnc_faq_set_refuses_a_package_without_the_readme(doc: Path) -> None:
    (doc / ns.X11VNC_README).unlink()
    nsc.assert_refuses_without_faq(ns.x11vnc_faq_set, ns.X11VNC_README)
