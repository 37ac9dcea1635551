"""The ``weechat-faq`` natural-question set (``bench/natural_sets.py``), its reader and the
question-leak check (``bench/check_question_leaks.py``) on small inline pages shaped like
Debian's ``weechat-doc`` (``html/weechat_faq.en.html``: asciidoctor HTML, a ``div#header``
holding the title, the author's lines and a ``div#toc`` contents list of every question, then
``div#content`` with sections ``<h2>N. Title</h2>`` of questions ``<h3>N.M. Question?</h3>``;
the English guides beside it) in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model.

What the set's numbers rest on: no question's text is left in any file (the contents list, a
guide quoting one aside); each answer is exactly the text under its question, up to the next
question or section; a heading numbered for another section, a section's preamble and a
heading inside a code block are no question; ids are the headings' numbers; an answer too
short to judge leaves the set but not the corpus's scrubbing; a guide over
``MAX_LINKED_CHARS`` is split by chapter; the developers' references stay out; the halves hold
when an entry is added.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt
import check_question_leaks as cql
import datasets as ds
import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_held_out

Q_NAME = 'Where does the name "WeeChat" come from?'
Q_WHY = "Why choose WeeChat? X-Chat and Irssi are so good…"
Q_BUFLIST = "How to display the buffers list on the left side?"
Q_256 = "How can I use 256 colors in WeeChat?"
Q_LOCALE = "I want to change the language used by WeeChat for messages, is it possible?"
Q_BUGS = "How should I report bugs, ask for new features or send patches?"
QUESTIONS = (Q_NAME, Q_WHY, Q_BUFLIST, Q_256, Q_LOCALE, Q_BUGS)


def _h3(anchor: str, number: str, title: str) -> str:
    return (
        f'<div class="sect2">\n<h3 id="{anchor}"><a class="anchor" href="#{anchor}"></a>'
        f"{number} {title}</h3>\n"
    )


def _toc(entries: list[tuple[str, str]]) -> str:
    items = "".join(f'<li><a href="#{a}">{t}</a></li>\n' for a, t in entries)
    title = '<div id="toctitle">Table of Contents</div>'
    return f'<div id="toc" class="toc2">\n{title}\n<ul>{items}</ul>\n</div>\n'


FAQ_TOC = _toc(
    [
        ("general", "1. General"),
        ("weechat_name", "1.1. " + Q_NAME),
        ("why", "1.2. " + Q_WHY.replace("…", "&#8230;&#8203;")),
        ("display", "3. Display"),
        ("buffers_list", "3.7. " + Q_BUFLIST),
        ("colors", "3.17. " + Q_256),
    ]
)
FAQ_HTML = f"""<!DOCTYPE html>
<html lang="en"><head><title>WeeChat FAQ (Frequently Asked Questions)</title></head>
<body class="article toc2 toc-left">
<div id="header">
<h1>WeeChat FAQ (Frequently Asked Questions)</h1>
<div class="details"><span id="author" class="author">Sébastien Helleu</span><br>
<span id="revnumber">version 3.8</span></div>
{FAQ_TOC}
</div>
<div id="content">
<div class="sect1">
<h2 id="general"><a class="anchor" href="#general"></a>1. General</h2>
<div class="sectionbody">
{_h3("weechat_name", "1.1.", Q_NAME)}
<div class="paragraph"><p>"Wee" is a recursive acronym and stands for "Wee Enhanced
Environment".</p></div>
</div>
{_h3("why", "1.2.", Q_WHY.replace("…", "&#8230;&#8203;"))}
<div class="paragraph"><p>Because WeeChat is very light and brings innovating features.</p></div>
</div>
{_h3("empty", "1.3.", "Is this entry empty?")}
</div>
</div></div>
<div class="sect1">
<h2 id="display"><a class="anchor" href="#display"></a>3. Display</h2>
<div class="sectionbody">
<div class="paragraph"><p>A preamble of the display section, before any question.</p></div>
{_h3("buffers_list", "3.7.", Q_BUFLIST)}
<div class="paragraph"><p>The plugin <a href="weechat_user.en.html#buflist">buflist ↗</a> is
loaded and enabled by default.</p></div>
<div class="sect3"><h4 id="buflist_keys">3.7.1. Keys</h4>
<div class="paragraph"><p>Use alt+shift+b to toggle the bar.</p></div></div>
<div class="listingblock"><div class="content"><pre>### 3.9. Not a heading inside code
/set weechat.bar.buflist.position left</pre></div></div>
</div>
{_h3("stray", "4.1.", "A heading numbered for another section here")}
<div class="paragraph"><p>Text under a stray heading, no answer.</p></div>
</div>
{_h3("colors", "3.17.", Q_256)}
<div class="paragraph"><p>256 colors are supported with ncurses and a terminal that has
TERM=screen-256color or xterm-256color; see the question about away nicks.</p></div>
</div>
{_h3("locale", "3.15.", Q_LOCALE)}
<div class="paragraph"><p>Yes, with the python script shell.py and the commands /shell
setenv LANG=en_US.UTF-8 then /upgrade.</p></div>
</div>
</div></div>
<div class="sect1">
<h2 id="development"><a class="anchor" href="#development"></a>9. Development</h2>
<div class="sectionbody">
{_h3("bugs", "9.1.", Q_BUGS)}
<div class="paragraph"><p>See this page ↗.</p></div>
</div>
</div></div>
</div>
<div id="footer"><div id="footer-text">Version 3.8<br>Last updated 2023-01-08</div></div>
</body></html>
"""

ANSWER_NAME = '"Wee" is a recursive acronym and stands for "Wee Enhanced Environment".'
ANSWER_BUFLIST = (
    "The plugin buflist ↗ is loaded and enabled by default.\n\n#### 3.7.1. Keys\n\n"
    "Use alt+shift+b to toggle the bar.\n\n```\n### 3.9. Not a heading inside code\n"
    "/set weechat.bar.buflist.position left\n```"
)


def test_split_weechat_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_weechat_faq(ns.asciidoctor_markdown(FAQ_HTML))
    assert [(k, q) for k, q, _ in qa] == [
        ("1.1", Q_NAME),
        ("1.2", Q_WHY),  # asciidoctor's zero-width space after the ellipsis dropped
        ("3.7", Q_BUFLIST),
        ("3.17", Q_256),
        ("3.15", Q_LOCALE),
        ("9.1", Q_BUGS),
    ]
    answers = {k: a for k, _, a in qa}
    assert answers["1.1"] == ANSWER_NAME
    # a deeper heading and a code block (with a "###" line in it) stay in the answer; the
    # stray heading numbered for section 4 ends it and is no question
    assert answers["3.7"] == ANSWER_BUFLIST
    assert answers["9.1"] == "See this page ↗."
    lines = text.split("\n")
    assert lines[0] == "# WeeChat FAQ (Frequently Asked Questions)"
    assert "## 1. General" in lines and "## 3. Display" in lines
    assert "### 4.1. A heading numbered for another section here" in lines
    # the entry with nothing under it asks nothing, its heading gone all the same
    assert "Is this entry empty?" not in text
    # the section's preamble and the stray heading's text are in the page, in no answer
    for kept in ("A preamble of the display section", "Text under a stray heading"):
        assert kept in text and not any(kept in a for _, _, a in qa)
    for _, q, a in qa:
        assert a in text and q not in text.replace("\u200b", "")
    # the contents list and the footer are left out by the converter
    assert "Table of Contents" not in text and "Last updated" not in text
    assert "\n\n\n" not in text


def test_split_weechat_faq_repeated_number_gets_a_suffix() -> None:
    md = "# T\n\n## 2. A\n\n### 2.1. Why?\n\none\n\n### 2.1. Why not?\n\ntwo\n"
    _, qa = ns.split_weechat_faq(md)
    assert qa == [("2.1", "Why?", "one"), ("2.1-2", "Why not?", "two")]


def test_split_weechat_faq_an_entry_without_text_asks_nothing() -> None:
    md = "# T\n\n## 1. A\n\n### 1.1. Why?\n\n### 1.2. How?\n\nso\n\n## 2. B\n\n### 2.1. When?\n"
    text, qa = ns.split_weechat_faq(md)
    assert qa == [("1.2", "How?", "so")]
    assert text == "# T\n\n## 1. A\n\nso\n\n## 2. B\n"


def test_split_weechat_faq_without_sections_asks_nothing() -> None:
    md = "# T\n\n### 1.1. Why?\n\nbecause\n\n## Notes\n\n### 1.2. How?\n\nso\n"
    text, qa = ns.split_weechat_faq(md)
    assert qa == [] and text == md


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:#", max_size=20),
    st.just(""),
    st.just("```"),
    st.builds(
        lambda level, n, t: f"{'#' * level} {n}. {t}",
        st.integers(1, 4),
        st.sampled_from(["1", "2", "10"]),
        st.text("ab ?", min_size=1, max_size=8),
    ),
    st.builds(
        lambda level, a, b, t: f"{'#' * level} {a}.{b}. {t}",
        st.integers(2, 4),
        st.sampled_from(["1", "2", "10"]),
        st.integers(0, 12),
        st.text(alphabet="abcd ?-\u200b", min_size=1, max_size=20),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
# a question heading of zero-width spaces only asks nothing (it gave an empty question)
@example(["## 1. ?", "### 1.0. \u200b", "```"])
def test_split_weechat_faq_answers_are_in_the_page_and_questions_are_not(
    lines: list[str],
) -> None:
    """On random FAQ-like pages: every answer is text of the page, ids are unique numbers,
    there are no more questions than ``### N.M.`` lines, and the page keeps every line but
    the questions' own (their count apart, nothing else leaves it)."""
    md = "\n".join(["# Title", "", *lines])
    text, qa = ns.split_weechat_faq(md)
    assert text.startswith("# Title") and "\n\n\n" not in text
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    numbered = [ln for ln in lines if re.match(r"^### \d+\.\d+\.\s+\S", ln)]
    assert len(qa) <= len(numbered)
    kept = [ln for ln in text.split("\n") if ln.strip()]
    assert len(kept) >= len([ln for ln in md.split("\n") if ln.strip()]) - len(numbered)
    for key, q, a in qa:
        assert re.fullmatch(r"\d+\.\d+(-\d+)?", key) and q.strip() and a.strip()
        assert "\u200b" not in q and a in text


# -- the set, built from a package tree shaped like Debian's weechat-doc ------------------------


def _asciidoctor_page(title: str, sections: list[tuple[str, str]]) -> str:
    body = "".join(
        f'<div class="sect1"><h2 id="s{i}">{h}</h2>\n<div class="sectionbody">'
        f'<div class="paragraph"><p>{p}</p></div></div></div>\n'
        for i, (h, p) in enumerate(sections)
    )
    return (
        f'<html><body><div id="header"><h1>{title}</h1>\n<div class="details"><span '
        f'id="author">Sébastien Helleu</span></div></div>\n<div id="content">\n{body}'
        '</div><div id="footer"><div id="footer-text">Last updated</div></div></body></html>'
    )


QUICKSTART = _asciidoctor_page(
    "WeeChat quick start guide",
    [("1. Start WeeChat", f"Run weechat in a terminal. FAQ: {Q_BUFLIST.upper()}")],
)
USER_GUIDE = _asciidoctor_page(
    "WeeChat user’s guide",
    [
        ("1. Introduction", "WeeChat (Wee Enhanced Environment for Chat) is a chat client."),
        ("7. Configuration", "Option weechat.look.buffer_time_format: " + "x " * 60),
        ("8. IRC", "The irc plugin connects to IRC servers; sasl for identification."),
    ],
)
SCRIPTING = _asciidoctor_page(
    "WeeChat scripting guide", [("1. Introduction", "Scripts in Python, Perl, Ruby.")]
)
DEV = _asciidoctor_page("WeeChat developer’s guide", [("1. Repositories", "Git at GitHub.")])


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_HTML) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.WEECHAT_PACKAGE, "3.8-1")
    html_dir = root / ns.WEECHAT_HTML
    html_dir.mkdir(parents=True)
    (html_dir / ns.WEECHAT_FAQ).write_text(faq, encoding="utf-8")
    (html_dir / "weechat_faq.fr.html").write_text(faq.replace("General", "Général"))
    (html_dir / "weechat_quickstart.en.html").write_text(QUICKSTART, encoding="utf-8")
    (html_dir / "weechat_user.en.html").write_text(USER_GUIDE, encoding="utf-8")
    (html_dir / "weechat_scripting.en.html").write_text(SCRIPTING, encoding="utf-8")
    for name in ns.WEECHAT_LEFT_OUT:
        (html_dir / name).write_text(DEV, encoding="utf-8")
    monkeypatch.setattr(ns, "MAX_LINKED_CHARS", 200)  # the user's guide is split by chapter
    return html_dir


def test_weechat_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.weechat_faq_set()
    assert [q.qid for q in nset.questions] == [
        "weechat-faq:1.1",
        "weechat-faq:1.2",
        "weechat-faq:3.7",
        "weechat-faq:3.17",
        "weechat-faq:3.15",
    ]
    # "See this page ↗." (3 words) cannot be judged by overlap: left out and named
    assert nset.left_out == (Q_BUGS,)
    assert Q_BUGS in nset.note and "3.8-1" in nset.note
    assert sorted(nset.files) == [
        "weechat_faq.md",
        "weechat_quickstart.md",
        "weechat_scripting.md",
        "weechat_user/00-weechat-user-s-guide.md",
        "weechat_user/01-1-introduction.md",
        "weechat_user/02-7-configuration.md",
        "weechat_user/03-8-irc.md",
    ]
    assert nset.files["weechat_user/03-8-irc.md"].startswith("## 8. IRC\n")
    assert "Sébastien Helleu" in nset.files["weechat_user/00-weechat-user-s-guide.md"]
    corpus = "\n".join(nset.files.values())
    # the developers' references and the other languages stay out
    assert "Git at GitHub" not in corpus and "Général" not in corpus
    assert all(name in nset.note for name in ns.WEECHAT_LEFT_OUT)
    # the quick start guide's quote of a question is scrubbed; its own text stays
    assert "Run weechat in a terminal. FAQ:" in nset.files["weechat_quickstart.md"]
    for q in nset.questions:
        assert q.source == "weechat_faq.md"
        assert q.answers[0][0] in nset.files["weechat_faq.md"]
    assert (nset.root / "weechat_user" / "03-8-irc.md").is_file()


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.weechat_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == len(QUESTIONS)
    assert cql.find_leaks(nset.files, asked, False) == []
    # the same check on the FAQ as shipped finds every question: it can fail
    shipped = cql.find_leaks({"faq.html": FAQ_HTML}, asked, True)
    assert {lk.question for lk in shipped} == set(QUESTIONS)


def test_weechat_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    first = ns.weechat_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert len(dev) + len(test) == len(first)
    assert (dev, test) == bt.sampled_halves(ns.weechat_faq_set().questions, None)
    added = FAQ_HTML.replace(
        '</div></div>\n</div>\n<div id="footer">',
        _h3("new", "9.2.", "Is a new entry kept apart from the old halves?")
        + '<div class="paragraph"><p>Yes, each question is sampled by its own id.</p></div>'
        + '</div></div></div>\n</div>\n<div id="footer">',
    )
    assert added != FAQ_HTML
    html_dir = ds.debian_package_root(ns.WEECHAT_PACKAGE) / ns.WEECHAT_HTML
    (html_dir / ns.WEECHAT_FAQ).write_text(added, encoding="utf-8")
    again = ns.weechat_faq_set().questions
    assert "weechat-faq:9.2" in {q.qid for q in again}
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def test_weechat_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html_dir = _package(tmp_path, monkeypatch)
    (html_dir / ns.WEECHAT_FAQ).unlink()
    with pytest.raises(FileNotFoundError):
        ns.weechat_faq_set()


def test_weechat_faq_is_held_out() -> None:
    """Run by name only: no screening script reads a held-out set by default."""
    assert_held_out("weechat-faq")
