"""The doxygen-faq natural set's page reader (``bench/natural_sets.py``): a Doxygen page's own
text block under its ``div.title``, the contents box and the tree view left out, the
``<h1>`` questions one level below the title."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from natural_sets import doxygen_page_markdown, split_heading_questions

_PAGE = """<html><head><title>Doxygen: Frequently Asked Questions</title></head><body>
<div id="side-nav"><a href="index.html">Getting started</a></div>
<div id="doc-content"><div><div class="header"><div class="headertitle"><div class="title">
Frequently Asked Questions </div></div></div><div class="contents">
<div class="toc"><h3>Table of Contents</h3><ul><li><a href="#q1">Why?</a></li></ul></div>
<div class="textblock"><h1><a class="anchor" id="q1"></a>
Why does it use Qt?</h1><p>Because of the wizard.</p>
<h1><a class="anchor" id="q2"></a>
How do I exclude tests?</h1><pre class="fragment">EXCLUDE_PATTERNS = */test/*
</pre></div></div><!-- contents -->
</div></body></html>"""


def test_doxygen_faq_page_reads_its_questions_and_answers() -> None:
    text = doxygen_page_markdown(_PAGE)
    assert text.startswith("# Frequently Asked Questions")
    assert "Table of Contents" not in text and "Getting started" not in text
    rest, pairs = split_heading_questions(text, 2)
    assert [q for q, _ in pairs] == ["Why does it use Qt?", "How do I exclude tests?"]
    assert pairs[0][1].strip() == "Because of the wizard."
    assert "EXCLUDE_PATTERNS" in pairs[1][1]
    assert "Why does it use Qt?" not in rest
