"""The bench's blanked-HTML variant of an FAQ set (``bench/bench_html_blanked.py``): a
question heading keeps its element and permalink and loses its text, every other heading
stays, and the question's text is gone from the whole page."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench_html_blanked import blank_questions


def test_question_headings_lose_their_text_and_keep_their_permalink() -> None:
    page = (
        "<h1>FAQ<a class='headerlink' href='#faq'>¶</a></h1>"
        '<div class="toc"><a href="#q1">Can I back up “two” servers?</a></div>'
        '<h3>Can I back up “two” servers?<a class="headerlink" href="#q1">¶</a></h3><p>Yes.</p>'
        '<h3>Other topic<a class="headerlink" href="#q2">¶</a></h3><p>Text.</p>'
        "<h2>Why&nbsp;is it slow?</h2><p>Because.</p>"
    )
    out, n = blank_questions(page, ["Can I back up “two” servers?", "Why is it slow?"])
    assert n == 2
    assert '<h3><a class="headerlink" href="#q1">¶</a></h3><p>Yes.</p>' in out
    assert "<h2></h2><p>Because.</p>" in out
    assert '<h3>Other topic<a class="headerlink" href="#q2">¶</a></h3>' in out
    assert "servers?" not in out  # the contents entry too
    assert "<h1>FAQ<a class='headerlink' href='#faq'>¶</a></h1>" in out


def test_definition_list_questions_are_emptied_or_removed() -> None:
    # asciidoc's labelled list (gitfaq): the question is the <dt>, inline code and all; the
    # set's question text reads "user.name ?" (tags became spaces), the page "user.name</code>?"
    page = (
        '<div class="dlist"><dl><dt class="hdlist1">\nWhat should I put in <code>user.name'
        "</code>?\n</dt><dd><p>Your name.</p></dd>"
        '<dt class="hdlist1">A term that asks nothing</dt><dd><p>Kept.</p></dd></dl></div>'
    )
    question = ["What should I put in user.name ?"]
    out, n = blank_questions(page, question)
    assert n == 1
    assert '<dt class="hdlist1"></dt><dd><p>Your name.</p></dd>' in out
    assert '<dt class="hdlist1">A term that asks nothing</dt>' in out
    gone, n = blank_questions(page, question, whole=True)
    assert n == 1 and "<dl><dd><p>Your name.</p></dd>" in gone


def test_numbered_topic_headings_and_quoted_questions_are_blanked() -> None:
    # Autoconf's FAQ: the section's title is a topic, the reader's question opens its text
    # across a line break; both go, the section number stays, a sub-section stays
    import re

    page = (
        '<h3 class="section">20.3 How Can I Bootstrap?</h3><pre class="example">If Autoconf'
        "\nrequires GNU M4, how do I bootstrap?</pre><p>A misunderstanding.</p>"
        '<h4 class="subsection">20.3.1 Details</h4><h3>4.1 Other topic</h3>'
    )
    q = ["If Autoconf requires GNU M4, how do I bootstrap?"]
    out, n = blank_questions(page, q, loose=True, numbered=re.compile(r"20\.\d+\.?\s+"))
    assert n == 1
    assert '<h3 class="section">20.3</h3>' in out and "bootstrap?" not in out
    assert "20.3.1 Details" in out and "4.1 Other topic" in out


def test_contents_links_quoting_a_question_are_emptied_number_and_case_aside() -> None:
    """A contents entry quotes a question with inline markup, a section number before it
    and, at times, another letter case: with ``links`` its text goes, its element stays;
    a link that quotes no question is untouched, and without ``links`` nothing changes."""
    questions = ["How do I make pkg-config find my libraries?", "How can I use it with CompuServe?"]
    page = (
        '<a href="#q1">2.3 How do I make <code>pkg-config</code> find my libraries?</a>\n'
        '<a href="#q2">I1. How can I use it with Compuserve?</a>\n'
        '<a href="#q3">3.1 Why is it slow?</a>\n'
    )
    out, _ = blank_questions(page, questions, links=True)
    assert '<a href="#q1"></a>' in out
    assert '<a href="#q2"></a>' in out
    assert "Why is it slow?" in out
    assert "pkg-config" not in out and "Compuserve" not in out
    kept, _ = blank_questions(page, questions)
    assert "<code>pkg-config</code>" in kept and "Compuserve" in kept
