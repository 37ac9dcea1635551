"""A DocBook admonition's title leads its text; it is no heading that re-nests the page.

usage87: mutt's HTML manual (DocBook XSL, Debian ``mutt``: ``/usr/share/doc/mutt/html``)
titles each note ``<div class="note"><h3 class="title">Note</h3>`` whatever the section's
level. Read as ``### Note``, it closed the ``####`` section it sat in: the section's text
after the note was filed under "Note", and the next sections nested under it
(``6. Sending Mail › Note › 6.4.3. Editor Considerations``), in chunk titles and heading
paths. Now the note's paragraph reads ``Note: Mutt only supports ...``.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.markup import html_to_markdown, parse

from treehop_test_doubles import BagOfWordsEmbedder

FILLER = "Mutt reformats flowed text for the reader when it is asked to do so. " * 30


def _page(level: int = 3, mark: str = "note", label: str = "Note") -> str:
    return f"""<html><head><title>Chapter 2. Getting Started</title></head><body>
<div class="chapter"><h1 class="title">Chapter 2. Getting Started</h1>
<div class="sect1"><h2 class="title">6. Sending Mail</h2>
<div class="sect2"><h3 class="title">6.4. Sending Format=Flowed Messages</h3>
<div class="sect3"><h4 class="title">6.4.2. Mutt Support</h4>
<p>Mutt properly space-stuffs the message. {FILLER}</p>
<div class="{mark}"><h{level} class="title">{label}</h{level}>
<p>Mutt only supports space-stuffing for the first two types of lines.</p></div>
<p>All leading spaces are to be removed by receiving clients. {FILLER}</p></div>
<div class="sect3"><h4 class="title">6.4.3. Editor Considerations</h4>
<p>Vim provides the w flag for its formatoptions setting. {FILLER}</p></div>
</div></div></div></body></html>"""


def _paths(html: str) -> dict[str, tuple[str, ...]]:
    md, _ = html_to_markdown(html)
    return {s.path[-1]: s.path for s in parse(md, "markdown").sections}


def test_a_note_leads_its_paragraph_and_the_sections_keep_their_places() -> None:
    md, _ = html_to_markdown(_page())
    assert "Note: Mutt only supports space-stuffing" in md
    assert "### Note" not in md
    paths = _paths(_page())
    assert "Note" not in paths
    assert paths["6.4.3. Editor Considerations"] == (
        "Chapter 2. Getting Started",
        "6. Sending Mail",
        "6.4. Sending Format=Flowed Messages",
        "6.4.3. Editor Considerations",
    )
    # the text after the note stays in its section
    section = next(s for s in parse(md, "markdown").sections if s.path[-1] == "6.4.2. Mutt Support")
    assert "All leading spaces are to be removed" in section.body


def test_chunk_titles_of_an_indexed_docbook_page(tmp_path: Path) -> None:
    doc = tmp_path / "html"
    doc.mkdir()
    (doc / "gettingstarted.html").write_text(_page(), encoding="utf-8")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(str(doc), target_uri="viking://resources/html")
        hits = th.find("editor considerations formatoptions vim", limit=10)
        texts = [m.content for m in hits.contexts()]
    assert texts and not any("› Note" in t or "\nNote\n" in t for t in texts), texts
    assert any("Note: Mutt only supports" in t for t in texts) or any(
        "6.4.3. Editor Considerations" in t for t in texts
    )
    assert not any(
        t.startswith("Chapter 2. Getting Started › 6. Sending Mail › Note") for t in texts
    )


def test_control_a_heading_outside_an_admonition_stays_a_heading() -> None:
    html = (
        "<div class='sect1'><h2>Notes</h2><p>Text.</p></div><div class='note'><p>Plain.</p></div>"
    )
    md, _ = html_to_markdown(html)
    assert "## Notes" in md and "Plain." in md and "Note:" not in md


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 6),
    st.sampled_from(["note", "warning", "tip", "caution", "important"]),
    st.sampled_from(["Note", "Warning", "Tip", "Caution", "Important", "Warning!"]),
)
def test_property_any_admonition_title_level_leaves_the_outline_alone(
    level: int, mark: str, label: str
) -> None:
    paths = _paths(_page(level, mark, label))
    assert label not in paths
    assert paths["6.4.3. Editor Considerations"][2] == "6.4. Sending Format=Flowed Messages"
    md, _ = html_to_markdown(_page(level, mark, label))
    lead = label if label.endswith("!") else label + ":"
    assert f"{lead} Mutt only supports space-stuffing" in md
