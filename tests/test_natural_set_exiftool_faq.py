"""The ``exiftool-faq`` natural-question set (``bench/natural_sets.py``), its reading of
ExifTool's hand-written FAQ page and the question-leak check (``bench/check_question_leaks.py``)
on a small inline FAQ shaped as Debian's ``libimage-exiftool-perl`` ships it
(``/usr/share/doc/libimage-exiftool-perl/html/faq.html``: the head with its style block, a
``<div class='index'>`` list of in-page links to the entries under short topic titles, the
title ``<h1>``, entries as an anchor ``<a name="Q3"></a>`` over a paragraph of numbered,
bold-quoted questions (one alone; three phrasings ``3a.``/``3b.``/``3c.`` of one problem
joined by ``<br>`` and "or"; one wrapped inside its bold; one quoting ``<code>``), the
answers in ``<blockquote>`` paragraphs with ``<pre>`` commands, one answer's parts headed by
its own anchors ``<a name="exif"><b>EXIF</b></a>``, an unanswered entry, the footer's rule
over "Last revised" and a link back home) beside the other pages of ``html/`` (the home page
quoting a question, the application's manual, the release history over the page limit, the
generated ``TagNames/`` tables and the PDF to be left out) and the README, in a package tree
laid out as the package unpacks (marker present, nothing downloaded); offline, no embedding
model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
list of them, a page quoting one); each answer is exactly the text under its entry up to the
next entry or the footer, shared by the entry's phrasings; ids are the author's labels, so
an added entry keeps the halves; an answer too short to judge leaves the set but not the
corpus's scrubbing.
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

Q_FORUM = "Is there a forum for discussing ExifTool issues?"
Q_WRONG = "ExifTool reports the wrong value or doesn't extract a tag"
Q_WRITE = "ExifTool doesn't write a tag properly"
Q_OTHER = "Other software can't read information written by ExifTool"
Q_SHUTTER = (
    "ExifTool reports more than one shutter speed or aperture value, and they are "
    "slightly different"
)
Q_CHARSET = "How does ExifTool handle coded character sets?"
Q_ZERO = "Why do I get '0 image files updated' when writing?"
Q_SOME = "ExifTool doesn't write some tags to a file"
ASKED = (Q_FORUM, Q_WRONG, Q_WRITE, Q_OTHER, Q_SHUTTER, Q_CHARSET, Q_ZERO, Q_SOME)
A_FORUM = "ExifTool issues can be discussed on the ExifTool forum at https://exiftool.org/forum/"
A_WRONG = (
    "[Also see FAQ number 23 for reasons why ExifTool may not write some tags.]\n\n"
    "First, make sure you are looking at the right information. Use ExifTool with a "
    "command like this:\n\n```\nexiftool -a -G1 -s c:\\images\\test.jpg\n```"
)
A_SHUTTER = "There are a number of different ways that aperture and shutter speed are stored."
A_CHARSET = (
    "Certain meta information formats allow coded character sets.\n\nEXIF: Most textual "
    "information in EXIF is stored in ASCII format.\n\nIPTC: The value of the "
    "CodedCharacterSet tag determines how the strings are read."
)
A_ZERO = (
    "There are a few reasons why this may happen:\n\n- The value of the tag is the same.\n\n"
    "- The file type is not writable."
)
ANSWERS = {
    "1": A_FORUM,
    "3a": A_WRONG,
    "3b": A_WRONG,
    "3c": A_WRONG,
    "4": A_SHUTTER,
    "10": A_CHARSET,
    "23a": A_ZERO,
    "23b": A_ZERO,
}


def _entry(anchor: str, asked: str, answer: str) -> str:
    return f'<a name="{anchor}"></a>\n<p>{asked}</p>\n\n{answer}\n\n'


FAQ = (
    '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n<html>\n<head>\n'
    "  <title>ExifTool FAQ</title>\n<link rel=stylesheet type='text/css' href='style.css'>\n"
    '<style type="text/css">\n<!--\npre { color: #800; margin-left: 2em }\n-->\n</style>\n'
    "</head>\n<body>\n<div class='index'>\n<ol class='index'>\n"
    '<li><a href="#Q1">Discussion forum</a></li>\n'
    '<li><a href="#Q3">ExifTool doesn\'t read/write properly</a></li>\n'
    '<li><a href="#Q23">"0 image files updated"</a></li>\n</ol>\n</div>\n\n'
    "<h1 class='up'>ExifTool FAQ</h1>\n\n"
    + _entry(
        "Q1",
        f'1. <b>"{Q_FORUM}"</b>',
        "<blockquote>\nExifTool issues can be discussed on the ExifTool forum at\n"
        '<a href="https://exiftool.org/forum/">https://exiftool.org/forum/</a>\n</blockquote>',
    )
    + _entry(
        "Q3",
        "3a. <b>&quot;ExifTool reports the wrong value or doesn't extract a tag&quot;</b>,\n"
        f'<br>3b. <b>"{Q_WRITE}"</b>, or\n<br>3c. <b>"{Q_OTHER}"</b>',
        '<blockquote><i>[Also see <a href="#Q23">FAQ number 23</a> for reasons why\n'
        "ExifTool may not write some tags.]</i></blockquote>\n\n"
        "<blockquote>First, make sure you are looking at the right information.  Use\n"
        "ExifTool with a command like this:\n\n<pre>exiftool -a -G1 -s c:\\images\\test.jpg"
        "</pre>\n</blockquote>",
    )
    + _entry(
        "Q4",
        '4. <b>"ExifTool reports more than one shutter speed or aperture value, and\n'
        'they are slightly different"</b>',
        "<blockquote>There are a number of different ways that aperture and shutter\n"
        "speed are stored.</blockquote>",
    )
    + _entry(
        "Q10",
        f'10. <b>"{Q_CHARSET}"</b>',
        "<!-- NOTE: CHANGES TO FAQ 10 MUST ALSO BE REFLECTED IN ExifTool.pod! -->\n\n"
        "<blockquote>Certain meta information formats allow coded character sets."
        "</blockquote>\n\n"
        '<blockquote><a name="exif"><b>EXIF</b></a>: Most textual information in EXIF is\n'
        "stored in ASCII format.</blockquote>\n\n"
        '<blockquote><a name="iptc"><b>IPTC</b></a>: The value of the CodedCharacterSet\n'
        "tag determines how the strings are read.</blockquote>",
    )
    + '<a name="Q11"></a>\n<p>11. <b>"Is this entry answered at all?"</b></p>\n\n'
    + _entry(
        "Q23",
        "23a. <b>\"Why do I get '<code>0 image files updated</code>' when writing?\"</b>, "
        f'or<br>\n23b. <b>"{Q_SOME}"</b>',
        "<blockquote>There are a few reasons why this may happen:\n<ul>\n"
        "<li>The value of the tag is the same.</li>\n<li>The file type is not writable.</li>"
        "\n</ul></blockquote>",
    )
    + "<hr>\n<i>Last revised Feb 8, 2023</i>\n"
    "<p class='lf'><a href=\"index.html\">&lt;-- Back to ExifTool home page</a></p>\n"
    "</body>\n</html>\n"
)


def test_split_exiftool_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_exiftool_faq(FAQ)
    # every phrasing a question of its own, quotes off, entities read, the wrapped bold and
    # the quoted <code> read whole; the phrasings of one entry share its answer
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the list of entries, the unanswered entry and the labels leave the page; the title,
    # the answers' own anchors as text and the footer stay (the footer in no answer)
    assert "Discussion forum" not in page and "read/write properly" not in page
    assert "answered at all" not in page and "23b." not in page
    assert page.startswith("# ExifTool FAQ\n\n")
    assert page.rstrip().endswith("Last revised Feb 8, 2023\n<-- Back to ExifTool home page")
    assert all("Last revised" not in a for *_, a in qa)
    # each entry's answer stands in the page once, whatever number of phrasings ask it
    assert page.count(A_WRONG) == 1 and page.count(A_ZERO) == 1


def test_split_exiftool_faq_edges() -> None:
    # no entry: the page converted, nothing asked; a repeated label gets -2; an anchor over
    # a paragraph with no number label, or with a number and no bold, is text; with no
    # footer the last answer runs to the page's end
    page, none = ns.split_exiftool_faq("<h1>Notes</h1><p>Text.</p>")
    assert none == [] and page == "# Notes\n\nText.\n"
    page, qa = ns.split_exiftool_faq(
        _entry("Q1", '1. <b>"Same?"</b>', "<blockquote>First.</blockquote>")
        + _entry("Q1", '1. <b>"Again?"</b>', "<blockquote>Second.</blockquote>")
        + _entry("x", '<b>"Unnumbered?"</b>', "<blockquote>Plain one.</blockquote>")
        + _entry("y", "2. Not a bold question", "<blockquote>Plain two.</blockquote>")
    )
    assert qa == [
        ("1", "Same?", "First."),
        (
            "1-2",
            "Again?",
            'Second.\n\n"Unnumbered?"\n\nPlain one.\n\n2. Not a bold question\n\nPlain two.',
        ),
    ]
    assert page == f"First.\n\n{qa[1][2]}\n"


_WORD = st.sampled_from(["tag", "exif", "xmp", "date", "gps", "write", "copy", "jpeg"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.lists(_WORD, min_size=1, max_size=8), min_size=1, max_size=3),
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_exiftool_faq_property(entries: list[tuple[list[list[str]], list[str]]]) -> None:
    """Random entries of one to three phrasings, some unanswered, with a footer: one
    question per phrasing of an answered entry, in order, its label its id, the entry's
    answer its answer, in the page; no question's word left in it."""
    body, expected = "<h1>Random</h1>\n", []
    for n, (phrasings, awords) in enumerate(entries, start=1):
        labels = [f"{n}{'abc'[i] if len(phrasings) > 1 else ''}" for i in range(len(phrasings))]
        asked = [" ".join([f"entry{n}x", *words]) + "?" for words in phrasings]
        head = ", or<br>\n".join(
            f'{label}. <b>"{q}"</b>' for label, q in zip(labels, asked, strict=True)
        )
        answer = " ".join(["Answer", *awords]) if awords else ""
        body += _entry(f"Q{n}", head, f"<blockquote>{answer}</blockquote>" if answer else "")
        if answer:
            expected += [(label, q, answer) for label, q in zip(labels, asked, strict=True)]
    body += "<hr>\n<i>Last revised today</i>\n"
    page, qa = ns.split_exiftool_faq(body)
    nsc.assert_random_split(page, qa, expected)
    assert page.rstrip().endswith("Last revised today")


# -- the set, built from a package tree shaped like Debian's libimage-exiftool-perl -------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.EXIFTOOL_PACKAGE, "12.57+dfsg-1")
    html_dir: Path = root / ns.EXIFTOOL_HTML

    def page(rel: str, title: str, body: str) -> None:
        (html_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (html_dir / rel).write_text(
            f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>",
            encoding="utf-8",
        )

    html_dir.mkdir(parents=True)
    (html_dir / ns.EXIFTOOL_FAQ).write_text(faq, encoding="utf-8")
    page(
        "index.html",
        "ExifTool by Phil Harvey",
        f"<p>See the FAQ: &quot;{Q_FORUM}&quot; Yes, there is one.</p>",
    )
    page("exiftool_pod.html", "exiftool Application Documentation", "<p>Read and write.</p>")
    page("ancient_history.html", "ExifTool Ancient History", "<p>Old change.</p>" * 12_000)
    page("TagNames/EXIF.html", "EXIF Tags", "<p>left out</p>")
    doc = html_dir.parent
    (html_dir / "MIE1.1-20070121.pdf").write_bytes(b"%PDF left out")
    write_gz(doc / "README.gz", "ExifTool by Phil Harvey\n\nInstall it with make.\n")
    (doc / "arg_files").mkdir()
    (doc / "arg_files" / "exif2xmp.args").write_text("left out\n")
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return html_dir


@pytest.fixture
def html_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`FAQ`), its ``html/`` folder."""
    return _package(tmp_path, monkeypatch)


def test_exiftool_faq_set_from_a_package_tree(html_dir: Path) -> None:
    nset = ns.exiftool_faq_set()
    nsc.assert_package_set(
        nset,
        "exiftool-faq",
        ids=list(ANSWERS),
        files={"faq.md", "index.md", "exiftool_pod.md", "README"},
        source="faq.md",
        version="12.57+dfsg-1",
        too_long="ancient_history.html",
        answers=ANSWERS,
    )
    text = " ".join(nset.files.values())
    assert "left out" not in text
    # a page quoting a question scrubbed, its other text kept; the README as text
    assert "Yes, there is one." in nset.files["index.md"]
    assert "Install it with make." in nset.files["README"]


def test_exiftool_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "ExifTool issues can be discussed on the ExifTool forum at\n"
        '<a href="https://exiftool.org/forum/">https://exiftool.org/forum/</a>',
        "See the forum.",
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.exiftool_faq_set(), Q_FORUM, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(html_dir: Path) -> None:
    nsc.assert_leak_checked(ns.exiftool_faq_set(), {"faq.html": FAQ}, ASKED, is_html=True)


def test_exiftool_faq_set_halves_are_fixed_and_disjoint(html_dir: Path) -> None:
    more = FAQ.replace(
        "<hr>\n",
        _entry(
            "Q24",
            '24. <b>"How do I copy a shifted date/time value?"</b>',
            "<blockquote>Use the -tagsFromFile option with a shifted value.</blockquote>",
        )
        + "<hr>\n",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.exiftool_faq_set,
        lambda: (html_dir / ns.EXIFTOOL_FAQ).write_text(more, encoding="utf-8"),
    )


def test_exiftool_faq_set_refuses_a_package_without_the_faq(html_dir: Path) -> None:
    (html_dir / ns.EXIFTOOL_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.exiftool_faq_set, ns.EXIFTOOL_FAQ)
