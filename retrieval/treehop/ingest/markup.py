"""Document structure for chunking: sections and their heading paths, in linear time.

A chunk that says where it sits ("Managers › Custom managers › Adding extra manager methods")
is found by queries that name the section, and a section is the unit a documentation author
wrote to answer one question. So a file is first parsed into sections, each with its heading
path, and only then cut to the embedder's window (:mod:`treehop.ingest.chunking`).

Three markups are understood:

* **Markdown**: ATX (``## Title``) and setext (``Title`` over ``===``/``---``) headings;
  fenced code (```` ``` ```` and ``~~~``, closed only by a fence of the same character at least
  as long) and indented code are never headings; YAML front matter is not a heading.
* **reStructuredText**: titles underlined, or over- and underlined, with any of the adornment
  characters; levels follow the order in which adornment styles first appear, as docutils
  does. Indented text (``::`` literal blocks, ``.. code-block::`` and every other directive
  body) can never hold a section title, so ``#`` comments or ``====`` lines in code are text.
* **HTML**: converted to Markdown-shaped text by :func:`html_to_markdown` (headings ``h1``-``h6``
  become ATX lines, ``<pre>`` becomes a fence longer than any backtick run inside it, any other
  line that could be read as markup is escaped), with navigation, headers, footers, sidebars,
  tables of contents, scripts, styles and ``¶`` permalinks dropped. Where a page's parts
  have no heading text (an emptied ``<h3>``, a ``<section>`` or ``<div class="section">``
  without one) the part still starts an entry (two blank lines before it, as a definition
  list's entry does; so does a block whose only content was an emptied ``<b>``, a
  hand-written FAQ's question), so the chunker never runs one answer into the next; a
  definition list's entry starts one too, unless it is a table's row (a term with text that
  asks nothing and an entry under :data:`TERSE_ENTRY_CHARS`: texinfo's codec tables, an
  options reference's one-line flags), which runs on with the text before it. A block whose
  text is all links to places inside pages of the site (``href="#..."`` or
  ``"faq.html#..."``: a hand-written table of contents, one repeated on every page, "back to
  top"; :func:`contents_link`) is navigation and dropped, and so is a block holding a link to
  the next, previous or parent node (``rel="next"``: texi2any's Next / Previous / Up bar,
  which names the neighbouring sections). A page whose text starts before any
  heading (titled only by ``<title>``, or by a styled ``<div>`` as Doxygen's pages are) is
  headed by its ``<title>``, so its chunks carry the page's name as a heading path.

Why no regular expression spans more than one line here: a pattern such as ``(.+?[.!?])(\\s|$)``
searched over text without the terminator rescans the rest of the text from every position
(O(n²): 20 KB took 22 s). Every parser below walks the text once, line by line, and every
per-line pattern is anchored and free of nested quantifiers, so the cost is linear in the
input (``tests/test_ingest_markup.py`` checks it by shape).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = [
    "HEADING_SEPARATOR",
    "Document",
    "Section",
    "clean_heading",
    "drop_inline_tags",
    "html_to_markdown",
    "link_texts",
    "looks_like_rst",
    "parse",
    "rst_unshown_out",
    "unescape_converted",
    "unescape_line",
]

HEADING_SEPARATOR = " › "
"""Joins a heading path into a chunk title: ``Page title › Section › Subsection``."""

_RST_ADORNMENT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_RST_TARGET = re.compile(r"\.\. _[^:\n]{1,200}:[ \t]*$")  # ``.. _label:`` link targets


@dataclass
class Section:
    """One section of a document: its heading path and its own text (children excluded)."""

    path: tuple[str, ...]
    """Headings from the document title down to this section; ``()`` before any heading."""
    body: str
    """The section's text without its heading line(s), code blocks included verbatim."""

    @property
    def heading(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def title(self) -> str:
        """The heading path as one line (``Page › Section``)."""
        return HEADING_SEPARATOR.join(self.path)


@dataclass
class Document:
    """A parsed document: its title (first heading) and its sections in order."""

    title: str
    sections: list[Section] = field(default_factory=list)

    @property
    def headings(self) -> list[str]:
        """Every heading in document order (the outline)."""
        return [s.heading for s in self.sections if s.path]


# ------------------------------------------------------------------------------------ helpers


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _indent(line: str) -> int:
    """Columns of leading indentation (a tab counts as four, as in Markdown)."""
    n = 0
    for ch in line:
        if ch == " ":
            n += 1
        elif ch == "\t":
            n += 4 - n % 4
        else:
            break
    return n


def _collapse(text: str) -> str:
    return " ".join(text.split())


_MAX_HEADING = 300
_RST_ROLE = re.compile(r":[\w.+-]{1,40}:`([^`]{0,300})`")
_MD_LINK = re.compile(r"\[([^\]\[]{0,300})\]\([^()\s]{0,2000}\)")
_TARGET_SUFFIX = re.compile(r"\s*<[^<>]{0,2000}>$")


def _role_text(m: re.Match[str]) -> str:
    inner = _TARGET_SUFFIX.sub("", m.group(1)) if m.group(1).endswith(">") else m.group(1)
    return inner.lstrip("~!")


_INLINE_TAG = re.compile(
    r"(`+[^`]{0,300}?`+)"  # a code span: kept as written (``Vector<b>`` is code, not markup)
    r"|</?(?:a|abbr|b|br|cite|code|del|dfn|em|font|i|img|ins|kbd|mark|q|s|samp|small|span"
    r"|strong|sub|sup|tt|u|var)(?:\s[^<>`]{0,300})?/?>",
    re.IGNORECASE,
)


def _keep_code_span(m: re.Match[str]) -> str:
    return m.group(1) or ""


def drop_inline_tags(text: str) -> str:
    """``text`` without Markdown's inline HTML element tags (their text kept), code spans kept
    as written; each match reads at most a few hundred characters, so linear."""
    return _INLINE_TAG.sub(_keep_code_span, text) if "<" in text else text


def link_texts(text: str) -> str:
    """Markdown's inline links as the text a reader sees (``[2.10.](#2_10)`` -> ``2.10.``);
    bounded patterns, so linear."""
    return _MD_LINK.sub(r"\1", text) if "](" in text else text


def clean_heading(text: str, inline_html: bool = False) -> str:
    """A heading as a reader sees it: inline markup (``code``, roles, links, emphasis) removed.

    ``inline_html``: the heading is Markdown's, where an inline HTML element's tags
    (``<a name="sar"></a>``, ``<code>``, ``<br/>``) render as nothing: they are dropped
    (their text kept), outside code spans. Why: FAQs anchor each heading so
    (``## 2. Questions related to sar<a name="sar"></a>``, sysstat's FAQ), and the tag led
    every chunk title, heading path and abstract of the section. Only inline element names
    are read as tags, so text such as ``<at>`` or ``<int>`` stays; a heading that came from
    HTML (its entities decoded, ``&lt;b&gt;`` written about HTML) or reST is not touched.

    Clipped first, so that the (bounded) patterns below run on at most a few hundred
    characters whatever the input.
    """
    text = _collapse(text)[:_MAX_HEADING]
    text = _RST_ROLE.sub(_role_text, text)
    text = _MD_LINK.sub(r"\1", text)
    if inline_html and "<" in text:
        text = _collapse(drop_inline_tags(text))
    for mark in ("``", "**", "`", "*"):
        text = text.replace(mark, "")
    return _ESCAPE.sub(_unescape, text).strip()


_ESCAPE = re.compile(r"\\(.)")


def _unescape(m: re.Match[str]) -> str:
    # reST: a backslash-escaped space joins (``QuerySet``\ s -> QuerySets); "\x" is "x".
    return "" if m.group(1) == " " else m.group(1)


class _Builder:
    """Collects sections while a parser walks the lines: a heading stack and the open body."""

    def __init__(self, inline_html: bool = False) -> None:
        self.inline_html = inline_html  # Markdown: inline HTML tags in a heading dropped
        self.stack: list[tuple[int, str]] = []  # (level, heading)
        self.body: list[str] = []
        self.path: tuple[str, ...] = ()
        self.sections: list[Section] = []

    def heading(self, level: int, text: str) -> None:
        self.flush()
        text = clean_heading(text, self.inline_html)
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, text))
        self.path = tuple(h for _, h in self.stack)

    def flush(self) -> None:
        body = "\n".join(self.body).strip("\n")
        if body.strip() or self.path:
            self.sections.append(Section(self.path, body))
        self.body = []

    def document(self) -> Document:
        self.flush()
        title = next((s.path[0] for s in self.sections if s.path), "")
        return Document(title=title, sections=self.sections)


# ----------------------------------------------------------------------------------- Markdown


def fence_open(line: str) -> tuple[str, int] | None:
    """``(char, length)`` when ``line`` opens a fenced code block."""
    if _indent(line) > 3:
        return None
    s = line.lstrip(" ")
    ch = s[:1]
    if ch not in {"`", "~"}:
        return None
    n = len(s) - len(s.lstrip(ch))
    if n < 3 or (ch == "`" and "`" in s[n:]):
        return None
    return ch, n


def fence_closes(line: str, ch: str, n: int) -> bool:
    if _indent(line) > 3:
        return False
    s = line.strip()
    return len(s) >= n and s == ch * len(s)


def atx_heading(line: str) -> tuple[int, str] | None:
    """``(level, text)`` for an ATX heading line (``## Title ##``)."""
    if _indent(line) > 3:
        return None
    s = line.strip()
    n = len(s) - len(s.lstrip("#"))
    if not 1 <= n <= 6 or (len(s) > n and s[n] not in " \t"):
        return None
    text = s[n:].strip()
    closing = text.rstrip("#")
    if closing != text and (not closing or closing[-1] in " \t"):
        text = closing.strip()
    return n, text.replace("\\#", "#")


def setext_level(line: str) -> int:
    """1 for a ``===`` underline, 2 for ``---``, 0 otherwise."""
    if _indent(line) > 3:
        return 0
    s = line.strip()
    if s and s == "=" * len(s):
        return 1
    if s and s == "-" * len(s):
        return 2
    return 0


_MD_MARKERS = frozenset(" \t#=-`~")  # a line starting otherwise is plain text
_SETEXT_LIKE = re.compile(r"[\r\n][^\S\r\n]*(?:=+|-+)[^\S\r\n]*(?:$|[\r\n])")
_SETEXT_FIRST = re.compile(r"[^\S\r\n]*(?:=+|-+)[^\S\r\n]*(?:$|[\r\n])")
r"""A line (split at ``\r`` or ``\n``, as :func:`_lines` splits) that is only ``=`` or only
``-`` once stripped (``[^\S\r\n]`` is what ``str.strip`` removes, less the line breaks):
every setext underline matches one of them (``_SETEXT_FIRST``: the first line). Linear:
each try starts at a line break (a leading character class, which the regex engine scans
for, where ``(?:^|[\r\n])`` made it try every position, 3x slower)."""


def could_have_heading(text: str) -> bool:
    """False when the Markdown parse of ``text`` surely finds no heading: no ``#`` (every ATX
    heading holds one) and no line that could underline a setext heading.

    Why: most short files of a tree are headingless prose, and their summary needs only the
    title and outline of the parse; C-level scans say there is none far cheaper than parsing
    every line (``test_ingest_markup`` checks it never says False wrongly)."""
    if "#" in text:
        return True
    if "=" not in text and "-" not in text:
        return False
    return _SETEXT_LIKE.search(text) is not None or _SETEXT_FIRST.match(text) is not None


def _parse_markdown(text: str, inline_html: bool = False) -> Document:
    b = _Builder(inline_html)
    lines = _lines(text)
    i = 0
    if lines and lines[0].strip() == "---":  # YAML front matter: metadata, never headings
        for j in range(1, len(lines)):
            if lines[j].strip() in {"---", "..."}:
                b.body.extend(lines[: j + 1])
                i = j + 1
                break
    fence: tuple[str, int] | None = None
    para_start = -1  # index in b.body where the open paragraph starts, -1 when none
    prev_blank = True
    prev_code = False
    for line in lines[i:]:
        if fence is not None:
            b.body.append(line)
            if fence_closes(line, *fence):
                fence = None
            continue
        blank = not line.strip()
        if blank:
            b.body.append(line)
            para_start, prev_blank = -1, True
            continue
        if line[0] not in _MD_MARKERS:  # the common case: a line of running text
            if para_start < 0:
                para_start = len(b.body)
            b.body.append(line)
            prev_blank = prev_code = False
            continue
        indented = _indent(line) >= 4
        if indented and (prev_blank or prev_code) and para_start < 0:
            b.body.append(line)  # indented code block
            prev_code, prev_blank = True, False
            continue
        prev_code = False
        opened = fence_open(line)
        if opened is not None:
            fence = opened
            b.body.append(line)
            para_start, prev_blank = -1, False
            continue
        atx = atx_heading(line)
        if atx is not None:
            b.heading(*atx)
            para_start, prev_blank = -1, True
            continue
        level = setext_level(line)
        if level and (para_start < 0 or len(b.body) - para_start > 1):
            # No paragraph (a ``---`` after a blank line: a thematic break), or one of
            # several lines (pandoc's and Python-Markdown's setext title is one line): a rule
            # line, not an underline. Why: a plain-text table between two dash rules made
            # the whole table a heading that led every later chunk of its file.
            b.body.append(line)
            para_start, prev_blank = -1, True
            continue
        if level:
            heading = _collapse(" ".join(b.body[para_start:]))
            del b.body[para_start:]
            b.heading(level, heading)
            para_start, prev_blank = -1, True
            continue
        if para_start < 0:
            para_start = len(b.body)
        b.body.append(line)
        prev_blank = False
    return b.document()


# --------------------------------------------------------------------------- reStructuredText


def adornment_char(line: str) -> str | None:
    """The character of an adornment line (``=====``, ``~~~~``), else None."""
    s = line.rstrip()
    if len(s) < 2 or s[0] not in _RST_ADORNMENT or s != s[0] * len(s):
        return None
    return s[0]


def _parse_rst(text: str) -> Document:
    b = _Builder()
    lines = _lines(text)
    if RST_UNSHOWN_DROPPED:
        lines = rst_unshown_out(lines)
    styles: dict[tuple[str, bool], int] = {}  # (char, overlined) -> level, in order of use
    n = len(lines)
    i = 0
    prev_blank = True

    def level_of(style: tuple[str, bool]) -> int:
        if style not in styles:
            styles[style] = len(styles) + 1
        return styles[style]

    while i < n:
        line = lines[i]
        ch = adornment_char(line)
        # Over- and underlined title: adornment, title (may be indented), same adornment.
        if (
            ch is not None
            and prev_blank
            and i + 2 < n
            and lines[i + 1].strip()
            and adornment_char(lines[i + 1]) is None
            and lines[i + 2].rstrip() == line.rstrip()
            and len(line.rstrip()) >= len(lines[i + 1].strip())
        ):
            b.heading(level_of((ch, True)), _collapse(lines[i + 1]))
            i += 3
            prev_blank = True
            continue
        # Underlined title: an unindented text line right after a blank line, then an
        # adornment at least as long. Indented lines (literal blocks, directive bodies,
        # block quotes) can never be titles.
        if (
            prev_blank
            and line.strip()
            and line[0] not in " \t"
            and ch is None
            and i + 1 < n
            and (under := adornment_char(lines[i + 1])) is not None
            and len(lines[i + 1].rstrip()) >= len(line.rstrip())
            and (i + 2 >= n or not lines[i + 2].strip() or adornment_char(lines[i + 2]) is None)
        ):
            b.heading(level_of((under, False)), _collapse(line))
            i += 2
            prev_blank = True
            continue
        if _RST_TARGET.match(line):  # a link target names the next title: neither text nor
            i += 1  # a line that would keep that title from being one
            continue
        b.body.append(line)
        prev_blank = not line.strip()
        i += 1
    return b.document()


RST_UNSHOWN_DROPPED = True
"""Whether a reST document's lines a reader of it never sees as text are left out of what it
reads as (its sections' text, a page short enough to be one node): the **docinfo** field
list under the title (``:Author: Jan Kneschke``, ``:Date: $Date: 2004/11/03 22:26:05 $``,
``:Revision: ...``, Sphinx's ``:orphan:``; docutils turns it into the document's metadata),
and the ``.. meta::``, ``.. contents::`` and ``.. sectnum::`` directives with their
indented options (HTML ``<meta>`` keywords, a table of contents and numbers docutils
generates: ``.. contents:: Table of Contents`` names nothing of the text). An
``:abstract:`` or ``:dedication:`` field is shown (a topic under the title), so it is kept
as written (a passage's and a file's abstract read its text as the page's sentence).
Off, every line was text: each of lighttpd's 33 module pages opened its first passage
(embedded, BM25-indexed, in ``slot_text`` and the context block) with ``:Author: ...
:Date: $Date$ :Revision: $Revision$ ... .. meta:: :keywords: ... .. contents:: Table of
Contents``, and its file's abstract (embedded) with the docinfo (helper ingest75)."""
_RST_FIELD_LINE = re.compile(r":([^\s:][^:\n]*):(?:[ \t]+(.*))?$")
"""A field list item's first line (``:Author: Jan``, ``:abstract:``); the marker is
followed by whitespace or the line's end, so a role (``:ref:`x```) is not one. The name
cannot hold a colon, so a failed match reads the line once."""
_RST_UNSHOWN_DIRECTIVE = re.compile(
    r"\.\.[ \t]+(?:meta|contents|sectnum|section-numbering)::(?:[ \t]|$)", re.I
)
_RST_SHOWN_FIELDS = frozenset({"abstract", "dedication"})
_RST_EXPLICIT = re.compile(r"\.\.(?:[ \t]|$)")
"""An explicit markup start: ``..`` then whitespace or the line's end."""
_RST_NOT_COMMENT = re.compile(r"\.\.[ \t]+(?:[_\[|]|[\w.+-]+(?::[\w.+-]+)*::(?:[ \t]|$))")
"""What an explicit markup start opens when it is no comment: a target (``.. _x:``), a
footnote or citation (``.. [1]``), a substitution (``.. |x| image::``) or a directive
(``.. note::``, ``.. py:function::``). The name's parts exclude the colon, so the pattern
reads a line once. Anything else after ``..`` is a comment (docutils' rule)."""
_RST_INCLUDE = re.compile(r"\.\.[ \t]+include::(?:[ \t]|$)", re.I)
"""``.. include:: ../header.txt``: docutils shows the named file's text in its place, which
a reader of this file does not have; the line itself is never shown."""


def _rst_title_style(lines: list[str], i: int) -> tuple[str, bool] | None:
    """The adornment style (character, overlined) of a section title at ``lines[i]``
    (its overline, or its text over an underline), else None; :func:`_parse_rst`'s rule
    without the blank line before it. Constant time."""
    n = len(lines)
    line = lines[i]
    ch = adornment_char(line)
    if ch is not None:
        if (
            i + 2 < n
            and lines[i + 1].strip()
            and adornment_char(lines[i + 1]) is None
            and lines[i + 2].rstrip() == line.rstrip()
            and len(line.rstrip()) >= len(lines[i + 1].strip())
        ):
            return ch, True
        return None
    if (
        line.strip()
        and line[0] not in " \t"
        and i + 1 < n
        and (under := adornment_char(lines[i + 1])) is not None
        and len(lines[i + 1].rstrip()) >= len(line.rstrip())
        and (i == 0 or adornment_char(lines[i - 1]) is None)
    ):
        return under, False
    return None


def _first_title_is_the_documents(lines: list[str]) -> bool:
    """Whether the first section title is the document's title: no later title has its
    adornment style (docutils promotes a lone top-level section's title to the document's;
    with two or more top-level sections there is no document title, and a field list under
    the first one is that section's text, not the docinfo). One pass."""
    first: tuple[str, bool] | None = None
    for i in range(len(lines)):
        if lines[i][:1] in {"", " ", "\t"}:
            continue
        style = _rst_title_style(lines, i)
        if style is None:
            continue
        if first is None:
            first = style
        elif style == first:
            return False
    return True


_RST_ENUMERATED = re.compile(r"(?:[0-9]+|[A-Za-z]|[IVXLCDMivxlcdm]+)[.)](?:[ \t]|$)")
"""A line that opens an enumerated list item (``1.``, ``a)``, ``IV.``): no paragraph's."""


def _in_paragraph(lines: list[str], i: int) -> bool:
    """Whether ``lines[i]`` continues the paragraph of the line above it: that line is
    unindented text opening with a letter or digit (no list item, field, title adornment,
    explicit markup or block quote). Then a ``..`` at its start is the paragraph's text, as
    docutils reads it (explicit markup starts a block, after a blank line or another
    construct), never a comment. Why (helper review77): ``rst_unshown_out`` dropped such a
    line as a comment (helper ingest76), and ``The range is 1`` / ``.. 10 for this option``
    lost its second line. Constant time."""
    if i == 0:
        return False
    above = lines[i - 1]
    return bool(above[:1].isalnum()) and _RST_ENUMERATED.match(above) is None


def _indented_end(lines: list[str], i: int, blanks: bool = False) -> int:
    """The index after the block indented under ``lines[i - 1]``: the indented (and blank)
    lines from ``i`` on, less the blank lines that close it unless ``blanks`` (a block left
    out after a blank line takes them along, so the text around it keeps one paragraph
    break). Each line is read at most twice."""
    n, j = len(lines), i
    while j < n and (not lines[j].strip() or lines[j][:1] in {" ", "\t"}):
        j += 1
    while not blanks and j > i and not lines[j - 1].strip():
        j -= 1
    return j


def rst_unshown_out(lines: list[str]) -> list[str]:
    """``lines`` of a reST document without the docinfo field list and the ``meta`` /
    ``contents`` / ``sectnum`` directives (see :data:`RST_UNSHOWN_DROPPED`); an
    ``:abstract:`` or ``:dedication:`` field is kept as written. The docinfo is the field list met
    before any body text: only blank lines, comments, titles (a line over or under an
    adornment) and the directives above come before it. One pass over the lines."""
    out: list[str] = []
    n, i = len(lines), 0
    docinfo = True
    titled = False  # a section title met (a docinfo after it only under the document's)
    documents: bool | None = None  # whether that title is the document's (read once)
    while i < n:
        line = lines[i]
        after_blank = not out or not out[-1].strip()
        if line[:2] == ".." and _RST_EXPLICIT.match(line) and not _in_paragraph(lines, i):
            if line.strip() == ".." and (i + 1 >= n or not lines[i + 1].strip()):
                # an empty comment (it ends a list or a quote): no text, and after a blank
                # line its blank lines go with it (an indented block after them is a quote)
                i += 1
                while after_blank and i < n and not lines[i].strip():
                    i += 1
                continue
            if (
                _RST_UNSHOWN_DIRECTIVE.match(line)
                or _RST_INCLUDE.match(line)
                or not _RST_NOT_COMMENT.match(line)
            ):
                i = _indented_end(lines, i + 1, after_blank)
                continue
        if docinfo and line[:1] == ":" and titled:
            if documents is None:
                documents = _first_title_is_the_documents(lines)
            docinfo = documents
        if docinfo and line[:1] == ":" and (field := _RST_FIELD_LINE.match(line)):
            shown = field.group(1).strip().lower() in _RST_SHOWN_FIELDS
            end = _indented_end(lines, i + 1, after_blank and not shown)
            if shown:  # as written: the abstracts read it as the page's sentence
                out.extend(lines[i:end])
            i = end
            continue
        if docinfo and line[:2] == "..":  # a comment, a target, a directive: and its body
            end = _indented_end(lines, i + 1)
            out.extend(lines[i:end])
            i = end
            continue
        if docinfo and line.strip():
            nxt = lines[i + 1] if i + 1 < n else ""
            if adornment_char(line) is None and adornment_char(nxt) is None:
                docinfo = False  # body text: a field list from here on is shown
            else:
                titled = True
        out.append(line)
        i += 1
    return out


def looks_like_rst(text: str, probe_lines: int = 400) -> bool:
    """Whether a ``.txt`` file is reStructuredText: a title underlined in its first lines.

    Sphinx projects (Django, CPython, ...) keep their sources as ``.txt``; a plain text file
    with no adorned title is chunked as paragraphs instead.
    """
    lines = _lines(text[:40_000])[:probe_lines]
    for i in range(len(lines) - 1):
        a, u = lines[i].rstrip(), adornment_char(lines[i + 1])
        if (
            a
            and a[0] not in " \t"
            and u is not None
            and adornment_char(a) is None
            and len(lines[i + 1].rstrip()) >= len(a)
            and (i == 0 or not lines[i - 1].strip() or adornment_char(lines[i - 1]) == u)
        ):
            return True
    return False


# --------------------------------------------------------------------------------- dispatch


def parse(text: str, kind: str) -> Document:
    """Sections of ``text`` by its markup (``markdown``/``html``, ``rst``; others: no headings)."""
    if kind in {"markdown", "html"}:
        return _parse_markdown(text, inline_html=kind == "markdown")
    if kind == "rst":
        return _parse_rst(text)
    b = _Builder()
    b.body = _lines(text)
    return b.document()


# ------------------------------------------------------------------------------------- HTML
#
# Python's html.parser rescans the rest of the input from every "<" that does not close a tag
# (3.11: 100 KB of "<a x " takes minutes), so HTML is tokenised here by a small scanner that,
# like a browser's tokenizer, never looks at a character twice: an unterminated tag, comment
# or quoted value simply runs to the end of the input.

_TAG_NAME = re.compile(r"[A-Za-z][^\t\n\f\r />]{0,64}")
_ATTR_NAME = re.compile(r"[ \t\n\f\r/]*([^\t\n\f\r />=][^\t\n\f\r />=]*)?")
_ATTR_EQ = re.compile(r"[ \t\n\f\r]*=[ \t\n\f\r]*")
_ATTR_BARE = re.compile(r"[^\t\n\f\r >]*")
_RAW_TEXT = frozenset({"script", "style", "textarea", "title", "xmp", "noscript", "template"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)

Attrs = dict[str, str]


def _scan_html(doc: str) -> Iterator[tuple[str, str, Attrs]]:
    """Events ``("start"|"end", tag, attrs)`` and ``("data", text, {})``, in one pass."""
    n = len(doc)
    pos = 0
    while pos < n:
        lt = doc.find("<", pos)
        if lt < 0:
            yield "data", doc[pos:], {}
            return
        if lt > pos:
            yield "data", doc[pos:lt], {}
        pos = lt
        nxt = doc[pos + 1 : pos + 2]
        if doc.startswith("<!--", pos):
            end = doc.find("-->", pos + 4)
            pos = n if end < 0 else end + 3
            continue
        if nxt in {"!", "?"}:
            end = doc.find(">", pos + 2)
            pos = n if end < 0 else end + 1
            continue
        closing = nxt == "/"
        m = _TAG_NAME.match(doc, pos + (2 if closing else 1))
        if m is None:
            if closing:  # "</>" or "</ x>": a bogus comment
                end = doc.find(">", pos + 2)
                pos = n if end < 0 else end + 1
            else:
                yield "data", "<", {}
                pos += 1
            continue
        tag = m.group(0).lower()
        pos = m.end()
        attrs: Attrs = {}
        done = False
        while pos < n:  # attributes; each step consumes what it reads
            am = _ATTR_NAME.match(doc, pos)
            assert am is not None  # every part of the pattern may be empty
            pos = am.end()
            if pos >= n:
                break
            if doc[pos] == ">":
                pos += 1
                done = True
                break
            name = am.group(1)
            if name is None:
                pos += 1
                continue
            em = _ATTR_EQ.match(doc, pos)
            value = ""
            if em is not None:
                pos = em.end()
                q = doc[pos : pos + 1]
                if q in {'"', "'"}:
                    end = doc.find(q, pos + 1)
                    if end < 0:
                        pos = n
                        break
                    value = doc[pos + 1 : end]
                    pos = end + 1
                else:
                    bm = _ATTR_BARE.match(doc, pos)
                    assert bm is not None
                    value = bm.group(0)
                    pos = bm.end()
            if not closing and len(attrs) < 64:
                attrs.setdefault(name.lower(), html.unescape(value))
        if not done:
            return  # a tag still open at the end of the input: dropped, as browsers do
        if closing:
            yield "end", tag, {}
            continue
        yield "start", tag, attrs
        if tag in _RAW_TEXT:
            # Raw text runs to the matching end tag (case-insensitive), found by one search.
            end_re = re.compile(rf"</{re.escape(tag)}[\t\n\f\r />]", re.IGNORECASE)
            em2 = end_re.search(doc, pos)
            stop = n if em2 is None else em2.start()
            yield "data", doc[pos:stop], {}
            yield "end", tag, {}
            if em2 is None:
                return
            gt = doc.find(">", em2.end() - 1)
            pos = n if gt < 0 else gt + 1


_SKIP_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "nav",
        "aside",
        "form",
        "button",
        "select",
        "svg",
        "iframe",
        "head",
        "object",
        "canvas",
    }
)
_SKIP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_SKIP_MARKS = frozenset(
    {
        # Sphinx (basic, alabaster, Django's theme) and common site chrome
        "sphinxsidebar",
        "sphinxsidebarwrapper",
        "related",
        "headerlink",
        "footer",
        "hd",
        "ft",
        "sidebar",
        "global-nav",
        "searchbox",
        "breadcrumb",
        "breadcrumbs",
        "wy-nav-side",
        "wy-breadcrumbs",
        "rst-versions",
        "navbar",
        "nav",
        "navigation",
        "toc-drawer",
        "sidebar-drawer",
        "skip-link",
        "visually-hidden",
        "sr-only",
        "screen-reader-text",
        # DocBook XSL (PostgreSQL's and git's manuals, most GNU/Linux books) and asciidoc: the
        # chunked pages' Prev / Up / Next bars carry the *neighbouring* pages' titles, and a
        # table of contents lists every section title of the page (or the book) as text.
        "navheader",
        "navfooter",
        "toc",
        # Sphinx's sidebar blocks (basic, classic, alabaster): "Related Topics" with its
        # "Previous: / Next:" lines, "Previous topic" / "Next topic", "This Page" / "Show
        # Source", the search form's wrapper; dropped by their class where a piece of a
        # raw page lost the ``div.sphinxsidebar`` around them (helper leftovers66a)
        *(
            "relations",
            "this-page-menu",
            "topless",
            "searchformwrapper",
        ),
    }
)
_RELATION_MARKS = frozenset(
    {"relations", "this-page-menu", "topless", "searchformwrapper", "searchbox", "search"}
)
"""Marks of a dropped Sphinx sidebar block whose heading (``<h3>This Page</h3>``, ``<h4>Next
topic</h4>``, ``<h3>Quick search</h3>``) stands just before it, outside it: that heading is
dropped with it (:meth:`_HTMLToMarkdown._drop_nav_heading`)."""
_NAV_HEADING_MARKS = frozenset({"searchlabel"})
"""Marks that drop an element even when it is a heading: Sphinx's ``h3#searchlabel`` ("Quick
search"). (Other marks spare headings: a heading's class names its section's kind.)"""
_NAV_LABELS = frozenset({"source link"})
"""``aria-label`` values of Sphinx's sidebar blocks that no class marks: the "This Page /
Show Source" block (``div role="note" aria-label="source link"``)."""
_RELATION_TITLES = frozenset({"next chapter", "previous chapter"})
"""``title`` values of the links of Sphinx's "Previous: / Next:" relations (its templates'
own attribute): the block holding one is a navigation bar, as with ``rel="next"``."""
_MAIN_MARKS = frozenset({"body", "document-body", "main-content", "articlebody", "page-content"})
"""Marks of a page's main column (its header, breadcrumb and footer outside it): Sphinx's
``div.body``, ``#main-content``, ``itemprop="articleBody"``, ``#page-content`` (the Apache
httpd manual's and many site themes' content wrapper: without it every page's chunk 0 began
"Modules | Directives | FAQ | Glossary | Sitemap", the site banner and the breadcrumb;
helper ingest74)."""
_BLOCK = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "tr",
        "table",
        "blockquote",
        "figure",
        "figcaption",
        "details",
        "summary",
        "br",
        "hr",
        "caption",
        "thead",
        "tbody",
        "body",
        "html",
    }
)
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_ADMONITION_MARKS = frozenset({"note", "warning", "tip", "caution", "important"})
"""Classes of a DocBook XSL admonition's ``<div>``, whose title is a heading at a fixed level
(``<div class="note"><h3 class="title">Note</h3><p>...``) whatever the section it sits in.
That heading is the admonition's label, not a section: it leads its first paragraph
(``Note: Mutt only supports ...``). Why (helper usage87): read as ``### Note``, it closed
the ``####`` section it sat in, so the section's text after the note was filed under
"Note", and the next ``####`` sections were nested under it (mutt's manual:
``6. Sending Mail › Note › 6.4.3. Editor Considerations``)."""
_SECTIONS = frozenset({"section", "article"})
"""Elements that open a part of the page on their own (so does a ``<div>`` marked as one,
:data:`_SECTION_MARKS`, and a rule, ``<hr>``, closes one): each starts an entry (the gap
mark), with or without a heading inside."""
_SECTION_MARKS = frozenset(
    {"section", "sect1", "sect2", "sect3", "sect4", "sect5", "simplesect", "qandaentry", "question"}
)
"""Classes of a ``<div>`` (or a table row) that opens a part of a page: older Sphinx's and
DocBook XSL's ``section``, DocBook DSSSL's ``SECT1``-``SECT5`` (the Debian-built FAQs and
manuals), DocBook's question-and-answer entries (``qandaentry``, a ``question`` row)."""
_BACKTICKS = re.compile(r"`+")
_NAV_RELS = frozenset({"next", "prev", "previous", "up"})
"""A link with one of these ``rel`` values goes to the next, previous or parent page or
node: the block holding it is a navigation bar (texi2any's "Next: X, Previous: Y, Up: Z
[Contents][Index]" before every node, a theme's Next / Previous buttons), whose link texts
are *other* sections' titles: dropped, as DocBook's ``navheader`` is."""


SITE_CONTENTS_LINKS = True
"""Whether :func:`contents_link` counts links into *other* pages of the site (``faq.html#x``)
as well as ``#x``; off only to measure what it changed (``bench/bench_pages_as_shipped.py``)."""


def contents_link(href: str) -> bool:
    """Whether a link goes to a place inside a page of the same site: ``#usage`` on this page
    or ``faq.html#usage`` on another (a relative URL with a fragment), what a table of
    contents, a "back to top" link and a hand-written site's contents list repeated at the top
    of every page (getmail's, a DocBook book's front page) are made of. A block whose text is
    all such links is dropped (a link into another page only inside a ``<ul>``/``<ol>``: a
    contents list's line; a paragraph holding one such link is a "See also" of the answer
    around it): each line of such a list names a section of the site, the section itself
    says more, and a list quoting every question of an FAQ would otherwise be the best match
    for many questions and fill a result slot with titles. An absolute URL
    (``https://...#x``, ``mailto:``) or a link to a whole page (``install.html``: a toctree's
    entry) is content and kept."""
    href = href.strip()
    if href.startswith("#"):
        return True
    if not SITE_CONTENTS_LINKS:
        return False
    path, sep, fragment = href.partition("#")
    return bool(sep and fragment) and ":" not in path.split("/", 1)[0] and not path.startswith("//")


TERSE_ENTRY_CHARS = 250
"""A definition list's entry shorter than this (term and definition), whose term has text
and is not a question, is a row of a table (texinfo's codec and option tables, an options
reference's one-line flags, a glossary's one-liners), not an answer: it gives back its entry
mark and runs on with the text before it. A quarter of the default chunk, the size below
which the chunker joins a section to its neighbour anyway
(:func:`treehop.ingest.chunking.split_text`)."""


@dataclass
class _DefinitionList:
    """An open ``<dl>`` while the converter walks it, and its entry being read: whether the
    entry keeps its mark is decided when it ends (:meth:`_HTMLToMarkdown._end_entry`)."""

    answers: bool
    """False for a field list (Sphinx's parameter lists): never entries."""
    mark: tuple[int, int] | None = None
    """``(index in out, index in main_out or -1)`` of the part that took the entry's mark."""
    chars: int = 0
    """Characters of text in the entry (nested lists included)."""
    term: bool = False
    """Whether the entry's term has text (an emptied term is a question taken out)."""
    asks: bool = False
    """Whether the term ends with ``?`` (an FAQ's question)."""

    def row(self) -> bool:
        """Whether the entry is a table's row, not an answer (:data:`TERSE_ENTRY_CHARS`)."""
        return self.answers and self.term and not self.asks and self.chars < TERSE_ENTRY_CHARS


LANGUAGE_LISTS = True
"""Whether a block that only lists the page's other languages is dropped
(:func:`language_list`); off only to measure what it changed."""
_LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,2}")
_LIST_SEPARATORS = re.compile(r"[\s|,/\u00b7\u2022]+")
_LANGUAGE_LIST_CHARS = 400


def language_list(text: str) -> bool:
    """Whether a block's text is a list of language codes, with or without a label
    (``Available Languages: de | en | fr | zh-cn``): what a page's language picker shows.
    Read only where the block links a page in another language (``hreflang``, the HTML
    attribute for it), and only on a block of at most :data:`_LANGUAGE_LIST_CHARS`
    characters (each pattern matches one bounded token: linear). Why: the Apache httpd
    manual shows the list at the top and the bottom of every page, and its codes (``zh-cn``,
    ``ja``, ``tr``) became every page's automatic tags and words of its first chunk."""
    if len(text) > _LANGUAGE_LIST_CHARS:
        return False
    label, colon, rest = text.partition(":")
    if not colon:
        rest = label
    elif len(label) > 40:
        return False
    codes = [t for t in _LIST_SEPARATORS.split(rest) if t]
    return len(codes) >= 2 and all(_LANGUAGE_CODE.fullmatch(t) for t in codes)


def _labelled(label: str, text: str) -> str:
    """An admonition's label leading its text: ``Note: text`` (``Warning!`` keeps its mark)."""
    lead = label if label[-1:] in _LABEL_ENDS else label + ":"
    return f"{lead} {text}" if text else lead


_LABEL_ENDS = frozenset(".:!?")


def _marks(attrs: Attrs) -> set[str]:
    marks = set(attrs.get("class", "").lower().split())
    if "id" in attrs:
        marks.add(attrs["id"].lower())
    if "itemprop" in attrs:
        marks.add(attrs["itemprop"].lower())
    return marks


class _HTMLToMarkdown:
    """Turns tokenizer events into Markdown-shaped text; see :func:`html_to_markdown`."""

    def __init__(self) -> None:
        self.out: list[str] = []  # every kept part
        self.main_out: list[str] = []  # parts inside the main column, when the page has one
        self.skip: list[tuple[str, int]] = []  # (tag, nesting) of the element being dropped
        self.main_depth = 0  # > 0 inside <main>/role=main/div.body: its same-tag nesting
        self.main_tag = ""
        self.seen_main = False
        self.heading: int | None = None
        self.heading_buf: list[str] = []
        self.pre = 0
        self.pre_buf: list[str] = []
        self.title = ""
        self.in_title = False
        self.line: list[str] = []  # inline text of the current block
        self.lists: list[_DefinitionList] = []  # open <dl>s
        self.list_gap: _DefinitionList | None = None  # the list whose entry set the pending gap
        self.last_item = ""  # the last <dt>/<dd> opened
        self.gap = False  # the next block starts a new entry (a blank line more before it)
        self.in_jump = 0  # > 0 inside a link to a place on the same page (``href="#..."``)
        self.jump_only = True  # the current block's text is all in such links (so far)
        self.bold = False  # the current block opened a <b>/<strong> (an FAQ's question label)
        self.nav = ""  # "rel" / "relation": the current block holds a link to the next /
        # previous / parent page (a ``rel``, or Sphinx's relation title)
        self.items = 0  # open <ul>/<ol> lists (a contents list's lines are their items)
        self.heading_at: tuple[int, int] | None = None  # (out, main_out) of a heading just out
        self.lang_link = False  # the current block links the page in another language
        self.admonition = False  # inside a DocBook admonition, before any of its text
        self.label_heading = False  # the heading being read is an admonition's label
        self.label = ""  # an admonition's label, for the start of its first block
        self.admonition_divs = 0  # the divs open from an admonition's own on (0: none)

    # -- output
    def _emit(self, part: str) -> None:
        if self.gap:
            part = "\n" + part  # two blank lines before an entry: chunking's boundary mark
            if self.list_gap is not None:  # (the entry's owner, not a list nested since)
                main = len(self.main_out) if self.main_depth else -1
                self.list_gap.mark = (len(self.out), main)
            self.gap, self.list_gap = False, None
        self.heading_at = None
        self.admonition = False
        self.out.append(part)
        if self.main_depth:
            self.main_out.append(part)

    def _drop_nav_heading(self) -> None:
        """Take back the heading emitted just before a dropped Sphinx sidebar block, when no
        text came between (:data:`_RELATION_MARKS`): it is that block's title ("This Page",
        "Next topic"), left outside it when a text splitter cut the block's opening tag off.
        (Not when a definition list's entry mark is on it: that mark's index must hold.)"""
        if self.heading_at is None or "".join(self.line).strip():
            return
        i, j = self.heading_at
        if any(dl.mark is not None and dl.mark[0] == i for dl in self.lists):
            return
        part = self.out.pop(i)
        if j >= 0:
            self.main_out.pop(j)
        if part.startswith("\n"):
            self.gap, self.list_gap = True, None
        self.heading_at = None

    def _end_block(self) -> None:
        text = _collapse("".join(self.line).replace("¶", ""))
        self.line = []
        jumps_only, self.jump_only, self.in_jump = self.jump_only, True, 0
        bold, self.bold = self.bold, False
        nav, self.nav = self.nav, ""
        lang_link, self.lang_link = self.lang_link, False
        if lang_link and LANGUAGE_LISTS and language_list(text):
            return  # (a language picker: "Available Languages: de | en | fr")
        if not text and bold:  # (an emptied bold question: like an emptied heading)
            self.gap = True
        if nav == "relation":
            self._drop_nav_heading()
        if not text or jumps_only or nav:  # (a contents list's line, a Next / Up bar)
            return
        if self.lists:
            dl = self.lists[-1]
            dl.chars += len(text)
            if self.last_item == "dt":
                dl.term, dl.asks = True, dl.asks or text.endswith("?")
        if self.label:
            text = _labelled(self.label, text)
            self.label = ""
        if text.startswith("\\") or atx_heading(text) or setext_level(text) or fence_open(text):
            # text, never read back as a heading, a rule or a fence (a leading backslash is
            # escaped too, so :func:`unescape_line` takes back exactly the one added here)
            text = "\\" + text
        self._emit(text + "\n\n")

    # -- events
    def start(self, tag: str, attrs: Attrs) -> None:
        if tag == "title":  # in <head>, which is otherwise dropped
            self.in_title = not self.title
            return
        if self.skip:
            self._nest_skipped(tag)
            return
        marks = _marks(attrs)
        if self._drops(tag, attrs, marks):
            if (
                marks & _RELATION_MARKS
                or attrs.get("role", "").lower() == "search"
                or attrs.get("aria-label", "").lower() in _NAV_LABELS
            ):
                self._drop_nav_heading()
            if tag not in _VOID:
                self.skip.append((tag, 1))
            return
        self._track_main(tag, attrs, marks)
        if self.pre:
            self._start_in_pre(tag)
            return
        self._track_entries(tag, marks)
        if tag == "div" and (self.admonition_divs or marks & _ADMONITION_MARKS):
            self.admonition_divs += 1  # (its nested divs counted, so that its end is found)
            self.admonition = self.admonition or bool(marks & _ADMONITION_MARKS)
        elif tag in _HEADINGS and self.admonition:
            self.label_heading = True
        self._open_element(tag, attrs)
        if tag in {"ul", "ol"}:
            self.items += 1
        if tag in _SECTIONS or tag == "hr" or (tag in {"div", "tr"} and marks & _SECTION_MARKS):
            self.gap = True  # (after the block before it has ended: it starts an entry)

    def _nest_skipped(self, tag: str) -> None:
        """Inside a dropped element: count its same-tag nesting so its own end is found."""
        if tag == self.skip[-1][0] and tag not in _VOID:
            self.skip[-1] = (tag, self.skip[-1][1] + 1)

    def _drops(self, tag: str, attrs: Attrs, marks: set[str]) -> bool:
        """Whether the element is dropped with everything in it (navigation, banners,
        scripts, hidden parts; headers and footers outside the main column). A link marked
        ``aria-hidden="true"`` is one the page keeps out of the accessibility tree: a heading's
        permalink (texi2html's ``#`` / ``TOC`` pair, GitHub's ``a.anchor``), never text."""
        return bool(
            tag in _SKIP_TAGS
            or attrs.get("role", "").lower() in _SKIP_ROLES
            or (marks & _SKIP_MARKS and tag not in _HEADINGS)
            or marks & _NAV_HEADING_MARKS
            or attrs.get("aria-label", "").lower() in _NAV_LABELS
            or (tag in {"header", "footer"} and not self.main_depth)
            or "hidden" in attrs
            or (tag == "a" and attrs.get("aria-hidden", "").lower() == "true")
        )

    def _track_main(self, tag: str, attrs: Attrs, marks: set[str]) -> None:
        """Enter the main column (``<main>``, ``role="main"``, a main mark) or nest in it."""
        if self.main_depth and tag == self.main_tag:
            self.main_depth += 1
        elif not self.main_depth and (
            tag == "main" or attrs.get("role", "").lower() == "main" or marks & _MAIN_MARKS
        ):
            self._end_block()
            self.main_depth, self.main_tag, self.seen_main = 1, tag, True

    def _start_in_pre(self, tag: str) -> None:
        """Inside ``<pre>`` only nested ``<pre>`` and ``<br>`` matter."""
        if tag == "pre":
            self.pre += 1
        elif tag == "br":
            self.pre_buf.append("\n")

    def _track_entries(self, tag: str, marks: set[str]) -> None:
        """Definition lists: each entry (question and answer) is set apart by a gap."""
        if tag == "dl":
            self._end_block()
            self.lists.append(_DefinitionList("field-list" not in marks))
        elif tag in {"dt", "dd"} and self.lists and self.lists[-1].answers:
            # a definition list's entry (an FAQ's question and answer, an API reference's
            # signature and description) starts at its first <dt>, or at a <dd> with none
            self._end_block()
            if self.last_item != "dt":
                self._end_entry()
                if not self.gap:
                    self.gap, self.list_gap = True, self.lists[-1]
            self.last_item = tag

    def _open_element(self, tag: str, attrs: Attrs) -> None:
        """What the element itself starts: a heading, a code block, a block, a cell, an
        image's alt text."""
        if tag in _HEADINGS:
            self._end_block()
            self.heading, self.heading_buf = _HEADINGS[tag], []
        elif tag == "pre":
            self._end_block()
            self.pre, self.pre_buf = 1, []
        elif tag in _BLOCK:
            self._end_block()
        elif tag in {"td", "th"}:
            self.line.append(" | ")
        elif tag == "img" and attrs.get("alt"):
            self.line.append(f" {attrs['alt']} ")
            self.jump_only = self.jump_only and self.in_jump > 0
        elif tag in {"b", "strong"} and self.heading is None:
            self.bold = True
        elif tag == "a" and self.heading is None:
            if attrs.get("hreflang", "").strip():
                self.lang_link = True
            if _NAV_RELS & set(attrs.get("rel", "").lower().split()):
                self.nav = "rel"  # (texi2any's "Next: ..., Previous: ..., Up: ..." bar)
            elif attrs.get("title", "").strip().lower() in _RELATION_TITLES:
                self.nav = "relation"  # (Sphinx's "Previous: X" / "Next: Y" lines)
            href = attrs.get("href", "").strip()
            if href.startswith("#") or (self.items and contents_link(href)):
                # (a link to a place on this page, anywhere: contents, "back to top"; to a
                # place in another page of the site, in a list item: a site's contents list.
                # A paragraph's lone link elsewhere, Sphinx's "See also", is the answer's.)
                self.in_jump += 1

    def end(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if self.skip:
            top, depth = self.skip[-1]
            if tag == top:
                if depth > 1:
                    self.skip[-1] = (top, depth - 1)
                else:
                    self.skip.pop()
            return
        if self.pre:
            if tag == "pre":
                self.pre -= 1
                if not self.pre:
                    self._end_pre()
            return
        if self.heading is not None and tag == f"h{self.heading}":
            text = _collapse("".join(self.heading_buf).replace("¶", ""))
            if self.label_heading:
                self.label_heading = self.admonition = False
                self.label = text
            elif text:
                self._emit("#" * self.heading + " " + text.replace("#", "\\#") + "\n\n")
                main = len(self.main_out) - 1 if self.main_depth else -1
                self.heading_at = (len(self.out) - 1, main)
            else:  # an emptied heading still ends the entry before it
                self.gap = True
            self.heading = None
        elif tag in _BLOCK:
            self._end_block()
            if tag in {"ul", "ol"} and self.items:
                self.items -= 1
        elif tag == "a" and self.in_jump:
            self.in_jump -= 1
        if tag == "dl" and self.lists:
            self._end_entry()
            chars = self.lists.pop().chars
            if self.lists:  # (a list nested in an entry: its text is the entry's)
                self.lists[-1].chars += chars
            self.last_item = ""
        if tag == "div" and self.admonition_divs:
            self.admonition_divs -= 1
            if not self.admonition_divs:
                # The admonition ends: a heading after it is no label, and a label none of
                # its text took is its own line, not the next block's lead. Why (helper
                # review77): a note with no text (an image, an empty one) left ``admonition``
                # on, and the next section's heading (``## Install``) was read as a label,
                # ``Install: Run make.``; an empty note's ``Note`` led that paragraph.
                self.admonition = self.label_heading = False
                if self.label:
                    self._emit(_labelled(self.label, "") + "\n\n")
                    self.label = ""
        if self.main_depth and tag == self.main_tag:
            self.main_depth -= 1
            if not self.main_depth:
                self._end_block()

    def _end_entry(self) -> None:
        """The entry being read ends (a new one starts, or its list closes): a table's row
        (:meth:`_DefinitionList.row`) gives back its mark and runs on with the text before
        it, as the table of codecs in an FAQ answer or an options reference's one-line
        flags do; an answer keeps it. Each mark is undone at most once: linear."""
        dl = self.lists[-1]
        if dl.row():
            if dl.mark is not None:
                i, j = dl.mark
                self.out[i] = self.out[i][1:]
                if j >= 0:
                    self.main_out[j] = self.main_out[j][1:]
            elif self.list_gap is dl:  # (a mark no text took yet)
                self.gap, self.list_gap = False, None
        dl.mark, dl.chars, dl.term, dl.asks = None, 0, False, False

    def data(self, text: str) -> None:
        if self.in_title:
            self.title += text
            return
        if self.skip:
            return
        text = html.unescape(text)
        if self.pre:
            self.pre_buf.append(text)
        elif self.heading is not None:
            self.heading_buf.append(text)
        else:
            if self.jump_only and not self.in_jump and text.strip():
                self.jump_only = False
            self.line.append(text)

    def _end_pre(self) -> None:
        if self.label:  # (an admonition that opens with code: its label a line above it)
            self._emit(_labelled(self.label, "") + "\n\n")
            self.label = ""
        code = "".join(self.pre_buf).strip("\n")
        longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
        fence = "`" * max(3, longest + 1)
        self._emit(f"{fence}\n{code}\n{fence}\n\n")

    def text(self) -> str:
        if self.heading is not None and not self.skip and not self.pre:
            self.end(f"h{self.heading}")  # a heading never closed: its text is still text
        self.heading = None
        if self.pre:
            self._end_pre()
        self._end_block()
        parts = self.main_out if self.seen_main and "".join(self.main_out).strip() else self.out
        text = "".join(parts).strip()
        title = _collapse(html.unescape(self.title))
        if text and title and not text.startswith("#"):
            # text before any heading (a page titled only by <title>, or by a styled <div>
            # as Doxygen's pages are): the page title heads it, so its chunks say what page
            # they come from, as a page's <h1> makes them say (a heading's line starts
            # with "#"; text that would, is escaped)
            text = f"# {title.replace('#', chr(92) + '#')}\n\n{text}"
        return text + "\n"


def unescape_line(line: str) -> str:
    """A line of :func:`html_to_markdown`'s text outside code as the page shows it: the
    backslash the converter put before text that would read as a heading, a rule or a fence
    (``\\# htpasswd -c ...``, a shell prompt in an example) taken back. Only for text
    already parsed (the chunker's blocks, a whole small file): the parse needs the escape."""
    return line[1:] if line.startswith("\\") else line


def unescape_converted(text: str) -> str:
    """:func:`unescape_line` on every line of ``text`` outside a code fence: what a reader of
    a converted page (a file short enough to be one node) sees. One pass over the lines."""
    if "\\" not in text:
        return text
    out: list[str] = []
    fence: tuple[str, int] | None = None
    for line in text.split("\n"):
        if fence is not None:
            if fence_closes(line, *fence):
                fence = None
        elif (opened := fence_open(line)) is not None:
            fence = opened
        else:
            line = unescape_line(line)
        out.append(line)
    return "\n".join(out)


def html_to_markdown(doc: str) -> tuple[str, str]:
    """``(markdown_text, page_title)`` of an HTML page, in linear time.

    Only the main column is kept when the page marks one (``<main>``, ``role="main"``,
    Sphinx's ``div.body``); navigation (DocBook's Prev / Up / Next bars included), banners,
    footers, sidebars, tables of contents, search boxes, scripts, styles and ``¶`` permalinks
    are dropped anywhere, because their words are the same on every page (or are other pages'
    titles) and would make every chunk look alike.
    """
    conv = _HTMLToMarkdown()
    for kind, value, attrs in _scan_html(doc):
        if kind == "data":
            conv.data(value)
        elif kind == "start":
            conv.start(value, attrs)
        else:
            conv.end(value)
    return conv.text(), _collapse(html.unescape(conv.title))


_HIDDEN_TEXT = _RAW_TEXT | frozenset({"head", "svg", "object", "canvas", "select"})
"""Elements whose text a reader of the page never sees as text (a ``<title>`` shows in the
tab, a script or style runs)."""


def html_visible_text(doc: str) -> str:
    """The text a reader sees in a piece of markup, *navigation included*: one line per block
    (a list item as ``- item``), entities decoded, ``¶`` permalinks and hidden elements'
    text (:data:`_HIDDEN_TEXT`) dropped; ``""`` when no visible character is left. Linear.

    Why, beside :func:`html_to_markdown`: that conversion drops navigation and tables of
    contents, which is right for a page (their words are on every page), but a *piece* of a
    raw page a text splitter cut (a Sphinx page's local contents, a footer) holds nothing
    else, and the integrations otherwise stored that piece as raw ``<li><a ...>`` markup:
    embedded, ranked and handed to a reader as tags (helper usage74, Jinja's manual: 234 of
    2,300 chunks)."""
    lines: list[str] = []
    line: list[str] = []
    hidden = 0
    item = False

    def end_line() -> None:
        nonlocal item
        text = _collapse(html.unescape("".join(line)).replace("¶", ""))
        line.clear()
        if text:
            lines.append(f"- {text}" if item else text)
        item = False

    for kind, value, _attrs in _scan_html(doc):
        if kind == "data":
            if not hidden:
                line.append(value)
        elif value in _HIDDEN_TEXT and value not in _VOID:
            hidden = hidden + 1 if kind == "start" else max(hidden - 1, 0)
        elif value in _BLOCK or value in _HEADINGS:
            end_line()
            item = kind == "start" and value == "li"
        elif value in _VOID:
            line.append(" ")
    end_line()
    return "\n".join(lines)
