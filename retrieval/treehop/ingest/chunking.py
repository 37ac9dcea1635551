"""Splitting long files into ordered, section-aware chunks that fit the embedder's window.

A file is parsed into sections first (:mod:`treehop.ingest.markup`: Markdown, HTML and
reStructuredText headings; code blocks are never headings). Each section becomes one chunk, or
several when it is longer than ``max_chars`` (cut at paragraph ends, then sentence ends, then
whitespace, only as a last resort mid-word). Small neighbouring sections of one parent are
merged, so that a page of one-line entries does not turn into dozens of near-empty chunks.

Every chunk carries its heading path as ``title`` (``Page › Section › Subsection``): a chunk
read out of context still says what it is about, and a query that names the section finds it.
Measured on the Django 3.2 reST sources (``bench/bench_ingest.py``), section-aware chunking is
what brings raw-file ingest close to ingesting one file per section.

All of it is linear in the input: the parsers walk lines once, long blocks are cut by index
arithmetic (never by re-slicing the remainder), and no pattern can rescan the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .markup import HEADING_SEPARATOR, Section, fence_closes, fence_open, parse, unescape_line

__all__ = ["Chunk", "split_text"]

_SENTENCE_END = re.compile(r"[.!?。！？][\"')\]]?(?=\s)|[。！？]")


@dataclass
class Chunk:
    """One chunk of a file, in order."""

    index: int
    title: str
    """The heading path of the chunk's (first) section, ``Page › Section``; ``""`` if none."""
    text: str
    """The chunk's text, without the heading path (merged sections keep their own heading)."""
    path: tuple[str, ...] = ()
    """The heading path as a tuple."""
    passage: int = -1
    """The index of the first chunk of the passage this chunk belongs to (one section, or one
    answer of a section, cut by size): chunks with one value continue each other, chunks with
    different values are different sections or answers (the retriever gives those separate
    result slots). -1: the chunk's own index."""

    def __post_init__(self) -> None:
        if self.passage < 0:
            self.passage = self.index


_Q_PREFIX = re.compile(
    r"[*_]{0,2}(?:Q(?:uestion)?[ \t]*\d{0,4}[ \t]*[:.)]|\d{1,4}[.)]|[A-Z]\d{1,3}[.)])[ \t]"
)
"""A question's label at the start of a line: ``Q:``, ``Q3.``, ``Question 2)``, ``12.``,
``E4)`` (anchored, bounded: linear in the line)."""
QUESTION_CHARS = 300
"""A block this short that ends with a question mark is a question on its own line."""
_NUMBERED_TITLE = re.compile(r"\d{1,4}(?:\.\d{1,4}){1,6}\.?[ \t]+[^\s\d]")
"""A multi-level section number opening a line, then a word: ``3.2.3  Other header file
problems`` or ``9.2  /dev/kmem-based HP-UX lsof Questions`` (how plain-text FAQs and manuals number
their entries; ``1.`` alone is a list item, not matched)."""
TITLE_CHARS = 120
"""A numbered line on its own this short, not ending a sentence, is an entry's title."""
_LABEL = re.compile(
    r"[*_]{0,2}(?:Q(?:uestion)?[ \t]*\d{0,4}[ \t]*[:.)]?|\(?\d{1,4}(?:\.\d{1,4}){0,6}[.)]"
    r"|\(\d{1,4}\)|[1-9]\d?(?:\.\d{1,2}){1,6}|\(?[A-Za-z]\)|[A-Z]\d{1,3}[.):]?)[*_]{0,2}"
)
"""An entry's label standing alone: ``(1)``, ``1.``, ``1.2.``, ``3.4``, ``2)``, ``(a)``,
``Q:``, ``Q3.``, ``Question 2:``, ``E4)``, bold or not: what is left of a numbered or
labelled question whose text was taken out (``fullmatch`` on one short line: linear). A bare
integer or letter is not one (a page number, a table cell), nor ``A:``, nor a decimal value
(``0.707``, ``1.414``: a section number without a closing ``.`` has no leading zero and at most
two digits a level)."""
LABEL_CHARS = 24
"""The longest line read as a label alone (:data:`_LABEL`)."""


_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*|([-=~^#*+_])\2{3,}[ \t]*")
"""A line that is only a rule: a Markdown thematic break (``---``, ``* * *``, ``___``) or a
reStructuredText transition (four or more of one of the adornment characters people use
for it), also how plain-text FAQs and notes set entries apart. ``fullmatch`` on one line,
no nested quantifier over the same text: linear."""


def _asks(block: str) -> bool:
    """Whether a block starts a new answer: a question on its own (a short block ending with
    ``?``), a labelled question (``Q:``, ``3.``, ``E4)``) with a ``?`` in its first
    :data:`QUESTION_CHARS` characters, an entry's label alone on the block's first line
    (``(1)``, ``1.2.``, ``Q:`` over ``A: ...``: :data:`_LABEL`, the question's text taken
    out), or
    a bold line on its own (``**Installing on Windows**``, how Markdown FAQs mark their
    entries), or a numbered title line on its own (``3.2.3  Other header file problems``,
    :data:`_NUMBERED_TITLE`). Read on the block's start and end only (linear)."""
    end = block.rstrip().rstrip("*_").rstrip()
    if len(block) <= QUESTION_CHARS and end.endswith("?"):
        return True
    first = block[:QUESTION_CHARS].split("\n", 1)[0].strip()
    if _Q_PREFIX.match(first) and "?" in block[:QUESTION_CHARS]:
        return True
    if (
        len(first) <= LABEL_CHARS
        and _LABEL.fullmatch(first)
        and not block.startswith("    ")  # (indented: an example's line, ``y)`` in Vim)
    ):
        return True  # (a line of its own: ``Q:`` over ``A: ...`` is one block)
    if (
        "\n" not in block
        and len(first) <= TITLE_CHARS
        and _NUMBERED_TITLE.match(first)
        and not first.endswith((".", ",", ";", ":"))
    ):
        return True
    return (
        len(first) <= QUESTION_CHARS
        and "\n" not in block
        and len(first) > 4
        and first.startswith(("**", "__"))
        and first.endswith(("**", "__"))
    )


def _blocks(body: str, converted: bool = False) -> list[tuple[str, bool, bool]]:
    """Paragraph-like blocks (runs of non-blank lines), each with whether it starts a new
    answer (:func:`_asks`, a rule line on its own before it (:data:`_BREAK`, dropped), or
    two or more blank lines before it: how
    :func:`~treehop.ingest.markup.html_to_markdown` marks the start of a definition list's
    entry, ``<dt>``/``<dd>``, of a ``<section>`` and the place of an emptied heading).

    ``converted``: the body is :func:`~treehop.ingest.markup.html_to_markdown`'s, whose
    escapes (a backslash before ``# htpasswd ...``) are taken back on lines outside code:
    read as escaped for rules, shown as the page shows them in the block's text."""
    out: list[tuple[str, bool, bool]] = []
    cur: list[str] = []
    rules = True  # every line of the open block is a rule line (as written)
    blanks = 0
    gap = False
    rule = False  # a rule line on its own ended the block before: the next one starts anew
    fence: tuple[str, int] | None = None  # the open code fence (a rule inside is code)
    code = False  # the block holds a line of a code fence
    for line in body.split("\n"):
        prose = False
        if fence is not None:
            code = True
            if fence_closes(line, *fence):
                fence = None
        elif (opened := fence_open(line)) is not None:
            fence, code = opened, True
        else:
            prose = converted
        if line.strip():
            if not cur:
                gap = (blanks >= 2 or rule) and bool(out)
                rules = True
            rules = rules and _BREAK.fullmatch(line) is not None
            cur.append(unescape_line(line) if prose else line)
            blanks = 0
        else:
            blanks += 1
            if cur:
                rule = _end_block(out, cur, gap, code, rules)
                cur, code = [], fence is not None
    if cur:
        _end_block(out, cur, gap, code, rules)
    return out


def _end_block(
    out: list[tuple[str, bool, bool]], cur: list[str], gap: bool, code: bool, rules: bool
) -> bool:
    """Append the block ``cur`` to ``out`` (with whether it starts a new answer) unless it is
    rule lines alone outside code (``rules``, :data:`_BREAK`: an author's mark between
    entries, no text), which are dropped; returns whether a rule stands between ``out``'s
    last block and the next."""
    if not code and rules:
        return True  # (two lines: the over- and underline of a deleted reST title)
    block = "\n".join(cur)
    out.append((block, gap or _asks(block), code))
    return False


CODE_LINE_CUTS = True
"""Whether an over-long block of code (a fenced block's lines, as ``<pre>`` converts) is cut
at line ends only, its fence closed at the end of each piece and opened again at the start
of the next, and a cut with no sentence end in reach prefers a line end to a space. Off,
code was cut like prose: at a ``.`` before a space or at any space, mid-line (lynx's
``KEYMAP:HOME:HOME`` / ``# Keypad Home ...`` in two chunks), the next piece's first line lost
its indentation and only the first piece had the opening fence (helper usage88)."""


def _cut(text: str, max_chars: int, code: bool = False) -> list[str]:
    """Cut one over-long block into pieces of at most ``max_chars``: at sentence ends when the
    block has them, else at the last line end or whitespace before the limit, else mid-word.
    ``code`` (a block of a code fence, :data:`CODE_LINE_CUTS`): at the last line end before
    the limit first, each piece's first line keeping its indentation, and a block that opens
    its fence has it closed and opened again around each cut."""
    if len(text) <= max_chars:
        return [text]
    fence = close = ""
    if code:
        first = text.split("\n", 1)[0]
        opened = fence_open(first)
        if opened is not None:
            fence = first.strip()
            close = opened[0] * opened[1]
            max_chars = max(max_chars - len(fence) - len(close) - 2, max_chars // 2)
    # Candidate cut points in one pass: sentence ends (preferred) and whitespace.
    ends = [] if code else [m.end() for m in _SENTENCE_END.finditer(text)]
    pieces: list[str] = []
    start = 0
    e = 0  # index into ends, only moves forward
    n = len(text)
    while n - start > max_chars:
        limit = start + max_chars
        while e < len(ends) and ends[e] <= limit:
            e += 1
        cut = ends[e - 1] if e and ends[e - 1] > start + max_chars // 3 else -1
        if cut < 0:
            nl = text.rfind("\n", start, limit) if CODE_LINE_CUTS else -1
            if nl > start + max_chars // 3:
                cut = nl
            else:
                ws = max(text.rfind(" ", start, limit), text.rfind("\n", start, limit))
                cut = ws if ws > start + max_chars // 3 else limit
        piece = _piece(text, start, cut, code)
        if piece:
            pieces.append(piece)
        start = cut
    tail = _piece(text, start, n, code)
    if tail:
        pieces.append(tail)
    if fence and len(pieces) > 1 and fence_closes(pieces[-1], fence[0], len(close)):
        # (the last cut fell just before the closing fence: it ends the piece before, not a
        # piece of its own, which was the fence reopened and closed around nothing, a chunk
        # of no text; helper review78b)
        closing = pieces.pop().strip()
        pieces[-1] += "\n" + closing
    if fence and len(pieces) > 1:
        last = len(pieces) - 1
        pieces = [
            (p if i == 0 else f"{fence}\n{p}") + ("" if i == last else f"\n{close}")
            for i, p in enumerate(pieces)
        ]
    return pieces


def _piece(text: str, start: int, end: int, code: bool) -> str:
    """``text[start:end]`` without the blank lines around it and, in prose, the spaces; a
    piece of code keeps its first line's indentation."""
    if code:
        return text[start:end].strip("\n").rstrip()
    return text[start:end].strip()


def _pieces(body: str, max_chars: int, converted: bool = False) -> list[tuple[str, bool]]:
    """A section's body packed into pieces of at most ``max_chars``, blocks kept whole when
    they fit, each with whether it continues the answer the piece before it began (a cut by
    size) rather than starting one.

    A block that starts a new answer (:func:`_blocks`: a question, a definition list's entry,
    a bold entry line) starts a new piece, unless the piece so far is shorter than a quarter
    of ``max_chars`` (a lone question or label joins its answer): a piece never ends in the
    middle of the next answer, so one chunk is one answer, or a part of one (issue 33: FAQ
    pages without headings were cut every 1,000 characters across answers). Only a piece of
    question or label blocks alone waits for its answer: a short answer, or the tail of a
    longer one cut by size, ends before the next question."""
    out: list[tuple[list[str], bool]] = []
    cur: list[str] = []
    size = 0
    small = max_chars // 4
    cont = False  # whether the open piece continues the previous piece's answer
    asks_only = True  # whether the open piece holds questions or labels only (no answer)
    for block, starts, code in _blocks(body, converted):
        if starts and cur and (size >= small or not asks_only):
            out.append((cur, cont))
            if cont and size < small:
                _rebalance(out, small, max_chars)
            cur, size, cont = [], 0, False
        asks_only = starts and (asks_only or not cur)
        for part in _cut(block, max_chars, code and CODE_LINE_CUTS):
            if cur and size + len(part) + 2 > max_chars:
                out.append((cur, cont))
                cur, size, cont, asks_only = [], 0, True, False
            cur.append(part)
            size += len(part) + 2
    if cur:
        out.append((cur, cont))
    return [("\n\n".join(parts), c) for parts, c in out]


def _rebalance(out: list[tuple[list[str], bool]], small: int, max_chars: int) -> None:
    """The short tail of an answer cut by size (``out[-1]``, ended by the next question)
    takes blocks from the end of the piece before it until it is no longer short, while
    that piece stays at least as long and the tail fits ``max_chars``: the answer's last
    part is a chunk of its own text, not a sentence alone (which embeds poorly)."""
    head, tail = out[-2][0], out[-1][0]
    head_size = sum(len(p) + 2 for p in head)
    tail_size = sum(len(p) + 2 for p in tail)
    while len(head) > 1 and tail_size < small:
        move = len(head[-1]) + 2
        if tail_size + move > max_chars or head_size - move < tail_size + move:
            break
        tail.insert(0, head.pop())
        head_size -= move
        tail_size += move


def _related(base: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """Whether ``path`` lies under the parent of ``base`` (a sibling, or a sibling's child)."""
    if not base:
        return not path
    return len(path) >= len(base) and path[: len(base) - 1] == base[:-1]


@dataclass
class _Group:
    """Sections on their way to becoming one chunk."""

    path: tuple[str, ...]
    texts: list[str]
    size: int
    whole: bool
    """True when the group holds whole sections only (not a piece of a longer one): only then
    may a following small section join it."""
    cont: bool = False
    """True when the group continues the answer of the group before it (cut by size)."""


def split_text(text: str, kind: str, max_chars: int = 1000) -> list[Chunk]:
    """Split ``text`` into section-aware chunks of at most about ``max_chars`` characters.

    ``kind`` is the loader's kind (``markdown``, ``html``, ``rst``, ``text``, ``code``); only
    Markdown/HTML and reST have headings. Sections shorter than a quarter of ``max_chars`` join
    the chunk before them when that chunk holds whole sections of the same parent (or is itself
    that short) and the two fit together; the joined section keeps its heading as a line.
    """
    doc = parse(text, kind)
    groups: list[_Group] = []
    for section in doc.sections:
        _add_section(groups, section, max_chars, kind == "html")
    chunks = _chunks_of(groups)
    if not chunks and text.strip():  # headings only: the headings are the text
        for part, cont in _pieces("\n".join(doc.headings) or text, max_chars):
            n = len(chunks)
            chunks.append(Chunk(n, "", part, (), chunks[-1].passage if cont and chunks else n))
    return chunks


EMPTY_HEADINGS_DROPPED = True
"""Whether a heading with no text of its own that no child follows (an emptied "See also")
is dropped when the next section is neither under it nor its sibling (a section above it:
the next directive); off, that section joined it, so its text (heading as a line) sat
under the empty heading's path."""


def _add_section(
    groups: list[_Group], section: Section, max_chars: int, converted: bool = False
) -> None:
    """One section's pieces appended to ``groups``: its first piece joins the open group when
    small enough (:func:`_joins_open`), every other piece is a group of its own; a heading
    without text is kept as an empty group until a child names it."""
    parts = _pieces(section.body, max_chars, converted)
    if (
        groups
        and not groups[-1].texts
        and (
            section.path[: len(groups[-1].path)] == groups[-1].path
            or (EMPTY_HEADINGS_DROPPED and section.path[:-1] != groups[-1].path[:-1])
        )
    ):
        # a heading with no text of its own: its children's paths name it; a section
        # above it or elsewhere is not its text (Apache's module pages: an emptied "See
        # also" took the next directive's section, titled "KeepAlive Directive › See also"
        # while it held KeepAliveTimeout; helper ingest74). A sibling still joins it, its
        # heading as a line: an empty page title over an "Introduction" beside it names
        # the page (Doxygen's pages)
        groups.pop()
    if groups and parts and _joins_open(groups[-1], section, parts, max_chars):
        parts = parts[1:]
    for i, (part, cont) in enumerate(parts):
        groups.append(_Group(section.path, [part], len(part), whole=len(parts) == 1, cont=cont))
        if i == 0 and len(parts) > 1:
            groups[-1].whole = False
    if not parts and not section.body.strip() and not (groups and groups[-1].path == section.path):
        groups.append(_Group(section.path, [], 0, whole=True))


def _joins_open(g: _Group, section: Section, parts: list[tuple[str, bool]], max_chars: int) -> bool:
    """Whether the section's first piece (with its heading as a line) joins the open group
    ``g``, and if so join it: it fits, the two are related (:func:`_related`), ``g`` holds
    whole sections, and one of them is shorter than a quarter of ``max_chars``."""
    small = max_chars // 4
    heading = section.heading
    first = f"{heading}\n\n{parts[0][0]}" if heading else parts[0][0]
    fits = g.size + len(first) + 2 <= max_chars
    related = _related(g.path, section.path) or not g.texts
    joins = g.size < small or (len(first) < small and len(parts) == 1)
    if not (fits and related and g.whole and joins):
        return False
    g.texts.append(first)
    g.size += len(first) + 2
    g.whole = len(parts) == 1
    return True


def _chunks_of(groups: Sequence[_Group]) -> list[Chunk]:
    """The groups with text as numbered chunks, each continuing its predecessor's passage
    when its group was cut from it by size."""
    chunks: list[Chunk] = []
    for g in groups:
        body = "\n\n".join(t for t in g.texts if t).strip("\n")
        if not body.strip():
            continue
        n = len(chunks)
        passage = chunks[-1].passage if g.cont and chunks else n
        chunks.append(Chunk(n, HEADING_SEPARATOR.join(g.path), body, g.path, passage))
    return chunks
