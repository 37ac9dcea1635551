"""Extractive L0/L1 summaries: real text from the content, never a placeholder.

Until an LLM summariser is configured, a directory is described by what it contains: its own
README/index (if any) and the headings and first sentences of its children. A file's abstract is
its title (first heading or docstring) and first sentence; its overview is its outline. These
texts are embedded, so they must carry the vocabulary of the content they stand for.

Headings come from :mod:`treehop.ingest.markup` (Markdown, HTML, reST), so a ``#`` comment in a
code block is never taken for a title. Everything here is linear in the text: the first sentence
is searched in a bounded prefix of the prose (the earlier ``(.+?[.!?])(\\s|$)`` search rescanned
the rest of the text from every position: 20 KB without a full stop took 22 s).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import InvalidConfigError
from . import markup
from .markup import (
    Document,
    adornment_char,
    atx_heading,
    could_have_heading,
    drop_inline_tags,
    fence_closes,
    fence_open,
    link_texts,
    looks_like_rst,
    parse,
    setext_level,
)

ABSTRACT_CHARS = 300
OVERVIEW_CHARS = 1800
SENTENCE_PROBE_CHARS = 2000
"""At most this many characters of prose are searched for a first sentence: an abstract is
clipped to 300 anyway, and the bound keeps the search linear however the text is shaped."""

OVERVIEW_FROM = "overview_from"
"""Directory metadata: the name of the directory's own page (README, index, overview, about)
its overview was written from, or :data:`FROM_CHILDREN` when it was generated from its
children's abstracts (extractive, clustered or LLM-written alike). A generated overview only
restates what the leaves hold: the retriever routes through such a directory but never gives it
a result slot (:func:`treehop.tree_scoring.is_result_unit`)."""
FROM_CHILDREN = "children"

_WORDLESS = re.compile(r"[^\w]{1,8}")
"""A short first line with no letter or digit: a comment marker alone (``#``, ``//``, ``;;``,
``/*``) opening a config file's or script's comment block, which names nothing. Why
(helper usage87): mutt's ``examples/Mush.rc``, ``Pine.rc`` and ``Muttrc`` open ``#`` /
``# Key bindings similar to those of MUSH`` / ``#``, and were abstracted ``#``: their folder's
overview read ``examples: #; #; #; # From``. The title is the next line that says something."""
_RCS_KEYWORD = re.compile(
    r"\$(?:Author|CVSHeader|Date|Header|Id|Locker|Log|Name|RCSfile|Revision|Source|State"
    r"|Mdocdate|FreeBSD|NetBSD|OpenBSD)(?::[^$\n]{0,300})?\$"
)
"""An RCS / CVS keyword as the version-control system writes it into a file (``$Id$``,
``$Id: TRACEFLAGS,v 8.53 2013-11-27 01:27:03 gshapiro Exp $``, ``$Revision: 1.4 $``; the
BSDs' ``$FreeBSD$``, ``$Mdocdate$``): a stamp, never the text's words. Why (the stop-76 lead,
helper ingest77): a ``#`` comment block's abstract kept it (mutt's ``Mush.rc`` was
``Mush: Key bindings similar to those of MUSH $Id$``), and a plain text opening with
``# $Id$`` (avr-libc's ``README``, sendmail's ``TRACEFLAGS``) was abstracted by that line. A
keyword's value is bounded (300 characters, no ``$`` or line break): linear."""
_SENT_END = re.compile(r"[.!?](?=\s|$)|[。！？]")
_README = re.compile(r"^(readme|index|overview|about)(\.[a-z0-9]+)?\Z", re.I)
_DOCSTRING = re.compile(r"[ \t]*(?:\"\"\"|''')[ \t]*(\S.{0,300})")
_LINE_COMMENT = re.compile(r"[ \t]*(?://|#|--|/\*+)[ \t]*(\w.{0,300})")
_CODE_DEF = re.compile(r"[ \t]*(?:def|class|func|fn|function|public|interface)[ \t]+(\w{1,100})")
_MARKUP_CHARS = re.compile(r"[*`>]+|(?<!\w)_+|_+(?!\w)")
"""Every emphasis, code and quote mark and any ``>``: how a file's or directory's abstract
(embedded: the global step ranks by it) is cleaned. An underscore inside a word is text and
stays (``mutt_dotlock``, ``S_TIME_FORMAT``): the marks were ``[*_`>]+`` until helper
ingest77, which wrote ``muttdotlock`` and ``STIMEFORMAT`` into abstracts (usage87's
finding); an underscore at a word's edge (``_emphasis_``, ``__init__``'s) is still a mark.
See :data:`_READER_MARKS` for a passage's abstract."""
_READER_MARKS = re.compile(r"[*`]+|(?<!\w)_+|_+(?!\w)|(?<!\S)>+")
"""Only the marks a reader of a structured text does not see: emphasis and code marks, an
underscore at a word's edge and a block quote's ``>``. An underscore inside a word
(``S_TIME_FORMAT``, ``swap_use_gnuplot``) and a ``>`` after a character
(``<robert@debian.org>``, ``a -> b``) are text: :data:`_MARKUP_CHARS` wrote
``STIMEFORMAT`` and ``<robert@debian.org`` into the passages' abstracts that the CLI, the MCP
``find`` and the integrations' ``abstract`` show (helper usage83)."""
ABSTRACTS_AS_READ = False
"""A file's and a directory's abstract take their first sentence as a reader sees it
(``first_sentence(..., as_read=True)``, as a passage's abstract does since helper usage83):
``S_TIME_FORMAT`` and ``gen_numa`` stay whole, a plain-text ``<a@b.org>`` keeps its ``>``.
These abstracts are embedded and the global step ranks by them, so this is a quality change,
screened on the natural-question dev halves before it may be the default (bench/README.md,
"File and folder abstracts as read (helper quality78)"). Read when a summary is written, so a
bench can set it for a whole run; :class:`ExtractiveSummarizer` ``(abstracts_as_read=)``
overrides it for one summariser. Off: on the 99 natural-question dev halves (3,550
questions, ``bench_natural.py --dev --rows find,flat-hybrid`` with and without
``--abstracts-as-read``) it moved 3 questions in 2 sets: nDCG@10 +0.0000 (1 won, 1 lost),
ctx@1000 unchanged, ctx@500 and ctx@2000 one answer lost each (inn-faq, whose FAQ file's
abstract became its title alone: a sentence that starts with the title gives the title)."""
_STRUCTURED = frozenset({"markdown", "html", "rst"})
"""The kinds whose text carries markup; plain text and code have none to drop."""
_NON_SPACE = re.compile(r"\S")
r"""The first character ``str.lstrip`` keeps (``\s`` is exactly ``str.isspace``)."""
_FIRST_PROBE = 256
"""Characters of prose cleaned first when looking for the first sentence (then 4x more)."""
_LABEL_TOKEN = re.compile(
    r"\(?(?:[A-Za-z]{0,2}\d{1,4}|[A-Za-z]|[IVXLCDM]{1,6}|[ivxlcdm]{1,6})"
    r"(?:[.)](?:\d{1,4}|[A-Za-z]))*[.)]"
)
"""One enumeration label: a section or entry number (``3.4.``, ``A.6.4.``, ``Q12.``, ``2)``,
``(a)``), a roman numeral (``IV.``) or a single letter (``W.``, an initial), always closed by
a period or parenthesis: a bare ``3.1`` or ``2021`` heading (a version, a year) or ``XML`` or
a spaced-out ``F A Q`` title is a name, not a label. Parts are joined by a mandatory
separator, so a failed match backtracks over a few characters only."""
_VERSION_NOTE = re.compile(
    r"[ \t*_`]*(?:(?:New|Added|Changed) in version|Deprecated since version)[ \t]+"
    r"(\S{1,40})(?=\s|$)"
)
"""A Sphinx version note with no text of its own, as Sphinx writes it (``versionadded``: "New
in version 2.0." / "Added in version 2.0.", ``versionchanged``: "Changed in version 2.2.",
``deprecated``: "Deprecated since version 3.0."): when a text opens with one, that is the
note's sentence, not the page's (Flask's ``async-await.html`` was abstracted ``Using async
and await: New in version 2.0.``; helper usage86's count, fixed by helper ingest76). A note
whose version is followed by its own text ("Changed in version 1.4: Session transaction
management has been revised ...") says something of the page and is kept. Each bare
note before the first other sentence is skipped (:func:`_past_version_notes`)."""
VERSION_NOTES_SKIPPED = True
"""Whether a first sentence skips the Sphinx version notes that open a text
(:data:`_VERSION_NOTE`); off only to measure what it changed."""
COMMENT_BLOCKS_READ = True
"""Whether a plain text that opens with a block of ``#`` comment lines (a configuration
example, a script: nginx's ``examples/http``, Apache's ``cgi-examples/printenv``) is
summarised from that block's words, the comment marks and rule lines (``##``, ``#####``)
left out, under the file's name: its abstract was ``# File:: # File: # http #
Description: # This file is meant ...`` (31 files of Debian's nginx / apache2
documentation; helper ingest75's count, fixed by helper ingest76). See
:func:`_opening_comments`."""
_COMMENT_PROBE_LINES = 400
_LEAD_IN_ENDS = frozenset(".!?:;。！？")
"""A plain-text heading ending so already ends (or leads into) what follows it."""
_LABEL_CHARS = 40
"""A text longer than this is never taken for labels alone (and is not scanned for them)."""


@dataclass(frozen=True)
class ChildSummary:
    name: str
    abstract: str
    is_leaf: bool


class Summarizer(Protocol):
    """Writes L0 abstracts and L1 overviews for files and directories."""

    def summarize_file(self, name: str, text: str, kind: str) -> tuple[str, str]: ...

    def summarize_directory(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> tuple[str, str]: ...


class BoundedSummarizer(Protocol):
    """A :class:`Summarizer` that reads only the first children of a directory (optional).

    Why: every write re-describes the directories above its target from their children
    (:meth:`treehop.ingest.writer.TreeWriter.refresh_ancestors`); reading all of them made
    an append to a conversation of 3,000 sessions, or a file added to a folder of 10,000,
    read every sibling. A summariser that declares this method is given the children in
    their stored order a page at a time, until it answers True or none are left; one that
    does not (an LLM's, a caller's) is given all of them, as before."""

    def directory_children_enough(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> bool:
        """True only if ``summarize_directory(name, children + later, readme)`` equals
        ``summarize_directory(name, children, readme)`` for every list ``later``."""
        ...


def _clip(text: str, n: int) -> str:
    """``text`` with whitespace collapsed, cut at a word boundary to at most ``n`` characters.

    Only a bounded prefix is read (a word is rarely longer than three characters of
    whitespace per kept character), so clipping a long text costs O(n), not O(len(text))."""
    return _cut(" ".join(text[: n * 4 + 64].split()), n)


def _cut(text: str, n: int) -> str:
    """``text`` (whitespace collapsed) cut at a word boundary to at most ``n`` characters."""
    if len(text) <= n:
        return text
    cut = text[:n]
    sp = cut.rfind(" ")
    return (cut[:sp] if sp > n * 0.6 else cut).rstrip(" ,;:") + "…"


_RST_FIELD = re.compile(r":([^\s:][^:\n]*):(?:[ \t]+(.*))?$")
"""A reST field list item at the start of a line (``:Author: Jan Kneschke``, ``:Date:
$Date$``, ``:abstract:``): the marker is followed by whitespace or the line's end, so an
interpreted role (``:ref:`x` ...``) is not one. Anchored at the line's start; one pass."""
_RST_ABSTRACT_FIELDS = frozenset({"abstract"})
"""The docinfo field docutils shows as the document's abstract (a topic headed "Abstract")."""


def _rst_abstract_field(lines: Sequence[str], i: int) -> list[str]:
    """The text of the ``:abstract:`` field at ``lines[i]``: its value on the marker's line
    and the lines indented under it, up to the first line that is not (blank lines inside
    it skipped). Reads the lines under it by index, up to that line: an empty field's look
    ends where the next one's begins, so a text of empty ``:abstract:`` fields is read
    once. (A slice ``lines[i + 1 :]`` copied the rest of the text for each field: a
    110,000-character text of them took 1.6 s and 4x as many 9 s; helper review74.)"""
    m = _RST_FIELD.match(lines[i])
    out = [m.group(2).strip()] if m and m.group(2) and m.group(2).strip() else []
    for j in range(i + 1, len(lines)):
        ln = lines[j]
        if ln.strip() and ln[:1] not in {" ", "\t"}:
            break
        if ln.strip():
            out.append(ln.strip())
    return out


def _prose_lines(text: str, kind: str, rst_fields: bool = False) -> list[str]:
    """The first lines of running text, with headings, code, directives, tables and comments
    left out; stops once about :data:`SENTENCE_PROBE_CHARS` characters are collected.

    ``rst_fields`` (reST read as a reader sees it: a passage's abstract): a field list item
    at a line's start is metadata, not prose (docutils' docinfo under a title: ``:Author:
    Jan Kneschke``, ``:Date: $Date: 2004/11/03 22:26:05 $``, ``:Revision: ...``), and is
    left out; an ``:abstract:`` field met before any prose is the document's own abstract
    and is the text read (lighttpd's module pages: ``:abstract:`` over ``url rewrite``)."""
    out: list[str] = []
    size = 0
    fence: tuple[str, int] | None = None
    lines = text.split("\n")
    structured = kind in {"markdown", "html", "rst"}
    fields = rst_fields and kind == "rst"
    lead_in = -1  # the index in ``out`` of the last plain-text heading given a lead-in colon
    last = len(lines) - 1
    for i, ln in enumerate(lines):
        if fence is not None:
            if fence_closes(ln, *fence):
                fence = None
            continue
        if fields and ln[:1] == ":" and (field := _RST_FIELD.match(ln)) is not None:
            if not out and field.group(1).strip().lower() in _RST_ABSTRACT_FIELDS:
                abstract = _rst_abstract_field(lines, i)
                if abstract:
                    return abstract
            continue
        if ln[:1].isalnum() and (i == last or lines[i + 1][:1].isalnum() or not lines[i + 1]):
            # Running text (most lines): a line that starts with a letter or digit opens no
            # fence and is no heading, adornment, table, comment or directive, and a next
            # line that is empty or starts so underlines nothing; the checks below would
            # all pass it (no character is both alphanumeric and whitespace).
            s = ln.strip()
            out.append(s)
            size += len(s) + 1
            if size >= SENTENCE_PROBE_CHARS:
                break
            continue
        if kind in {"markdown", "html"} and (opened := fence_open(ln)) is not None:
            fence = opened
            continue
        s = ln.strip()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        skip = not s or s.startswith(("|", "<!--", "+-"))
        if not (out or skip or structured) and _WORDLESS.fullmatch(s) is not None:
            continue  # (plain text's comment marker alone before any text: :data:`_WORDLESS`)
        if not (skip or structured) and "$" in s and _says_nothing(s):
            continue  # (plain text's RCS keyword line, ``# $Id$``: :data:`_RCS_KEYWORD`)
        if structured and not skip:
            skip = (
                ln[:1] in {" ", "\t"}  # indented: code, directive bodies, block quotes
                or atx_heading(ln) is not None
                or adornment_char(ln) is not None
                or (adornment_char(nxt) is not None and len(nxt.rstrip()) >= len(ln.rstrip()))
                or setext_level(nxt) > 0
                or s.startswith(".. ")
            )
        if kind == "text" and not skip:
            # Plain text has no markup, but underlines (``=====``, ``~~~~``, ``----``) and
            # rules are drawn as in reST: the line itself is no prose, and the line above one
            # is a heading, read as the lead-in of the sentence after it (``ABCDE`` over
            # ``=====`` then ``It was ...`` gives ``ABCDE: It was ...``).
            if adornment_char(s) is not None:
                continue
            if adornment_char(nxt.strip()) is not None and s[-1] not in _LEAD_IN_ENDS:
                s += ":"
                lead_in = len(out)
        if skip:
            continue
        out.append(s)
        size += len(s) + 1
        if size >= SENTENCE_PROBE_CHARS:
            break
    if out and lead_in == len(out) - 1:  # a heading with nothing after it leads into nothing
        out[-1] = out[-1][:-1]
    return out


def _past_version_notes(body: str) -> str:
    """``body`` from its first sentence that is no bare Sphinx version note
    (:data:`_VERSION_NOTE`), or "" when it holds nothing else. Each note is matched where
    the last one ended, over a bounded token: one pass."""
    start = 0
    while (note := _VERSION_NOTE.match(body, start)) is not None:
        if not note.group(1).rstrip("*_`").endswith("."):
            break  # the note goes on with its own text
        start = note.end()
    return body[start:].lstrip() if start else body


def _without_keywords(line: str) -> str:
    """``line`` without its RCS keywords (:data:`_RCS_KEYWORD`)."""
    return _RCS_KEYWORD.sub("", line) if "$" in line else line


def _says_nothing(line: str) -> bool:
    """Whether a stripped line holds no word once its RCS keywords are out: blank, comment
    marks alone (:data:`_WORDLESS`), or marks and a keyword (``# $Id$``)."""
    s = _without_keywords(line).strip()
    return not s or _WORDLESS.fullmatch(s) is not None


def _opening_comments(text: str) -> str | None:
    """The words of the ``#`` comment lines a plain text opens with (blank lines before and
    among them, and a ``#!`` interpreter line, skipped), one line each, the marks and the
    spaces after them left out (a line of marks only, ``##``, becomes blank), and RCS
    keywords (``$Id$``: :data:`_RCS_KEYWORD`) out of them; None unless at least two such
    lines hold words or a keyword, one of them words (a keyword's line is a line of the
    block, its stamp no word of it). Reads at most :data:`_COMMENT_PROBE_LINES` lines."""
    out: list[str] = []
    worded = 0
    stamped = 0  # comment lines that held only RCS keywords
    for i, ln in enumerate(text.split("\n", _COMMENT_PROBE_LINES)[:_COMMENT_PROBE_LINES]):
        s = ln.strip()
        if not s:
            out.append("")
            continue
        if s[0] != "#":
            break
        if i == 0 and s.startswith("#!"):
            out.append("")  # a script's interpreter line
            continue
        words = s.lstrip("#").strip()
        bare = _without_keywords(words).strip()
        if bare != words:  # (an RCS keyword: a stamp, out)
            stamped += _says_nothing(bare)
            words = "" if _says_nothing(bare) else bare
        if words and adornment_char(words) is None:
            worded += 1
            out.append(words)
        else:
            out.append("")
    return "\n".join(out) if worded >= 1 and worded + stamped >= 2 else None


def is_label(text: str) -> bool:
    """True when ``text`` is only enumeration labels (:data:`_LABEL_TOKEN`): ``3.4.``,
    ``IV.``, ``Q12.``, ``1. 2.``.

    Why: numbered FAQs and manuals start an entry with its number (``3.4. Is chronyd allowed
    to step the system clock?``); a full stop after the number reads as a sentence end and a
    line of its own as a title, so the abstract (embedded, BM25-indexed, listed in the
    folder's overview) said ``3.4.`` and nothing of the entry. Such a label is never the
    first sentence or the title: the text after it is. Bounded: at most
    :data:`_LABEL_CHARS` characters are looked at."""
    s = text.strip()
    return 0 < len(s) <= _LABEL_CHARS and all(_LABEL_TOKEN.fullmatch(t) for t in s.split())


def first_sentence(text: str, kind: str = "markdown", as_read: bool = False) -> str:
    """The first sentence of the running text (headings and code skipped), in linear time.

    ``as_read``: the sentence as a reader sees it, for a passage's abstract (shown, never
    embedded): plain text and code keep every character, a structured text loses only the
    marks a reader does not see (:data:`_READER_MARKS`) and, in Markdown, inline HTML tags
    (``2.18.<a name="2_18"></a> How can I ...``: :func:`markup.drop_inline_tags`) and a
    link's target (``[2.10.](#2_10)``: :func:`markup.link_texts`), in reST a field list's
    metadata (``:Author: ...``, ``:Date: $Date: ...$``) while an ``:abstract:`` field is read
    as the text (``_prose_lines(rst_fields=True)``, helper usage85). Without
    it every kind loses every ``*_`>`` (:data:`_MARKUP_CHARS`), as file and directory
    abstracts, which are embedded, always have: changing those moves the global step, and
    that is a quality change to screen on the benchmark sets first (603 file abstracts of
    the 5,047 files in 77 of the 99 cached natural corpora would change; helper usage83).

    Markup characters are dropped before the sentence end is searched (``end.** next``
    ends at the full stop), but only from a growing prefix: dropping characters maps a
    prefix of the body to a prefix of the result, so a sentence end found strictly inside
    the cleaned prefix is the first one of the whole (one at its very end is tried again
    with more text: what follows decides the look-ahead). Most first sentences end in the
    first few hundred characters of a probe of up to 2,000.

    A sentence end that closes only enumeration labels (``3.4.``, ``IV.``: :func:`is_label`)
    ends no sentence: the search goes on, and the sentence is the label and the text after
    it (``3.4. Yes, ...``); each search starts where the last one ended, so still linear."""
    # reST's docinfo is no prose in any abstract (a file's too, since helper ingest75:
    # ``URL Redirection: :Author: Jan Kneschke :Date: ...`` was 29 of lighttpd's 34)
    fields = as_read or markup.RST_UNSHOWN_DROPPED
    body = " ".join(_prose_lines(text, kind, rst_fields=fields))[:SENTENCE_PROBE_CHARS]
    if VERSION_NOTES_SKIPPED:
        body = _past_version_notes(body)
    marks: re.Pattern[str] | None = _MARKUP_CHARS
    if as_read:
        marks = _READER_MARKS if kind in _STRUCTURED else None
        if kind == "markdown":  # the whole probe at once: a tag never straddles a prefix
            body = link_texts(drop_inline_tags(body))
    n = _FIRST_PROBE
    while True:
        whole = n >= len(body)
        part = body if whole else body[:n]
        if marks is not None:
            part = marks.sub("", part)
        m = _SENT_END.search(part)
        while m is not None and m.end() <= _LABEL_CHARS and is_label(part[: m.end()]):
            m = _SENT_END.search(part, m.end())
        if whole or (m is not None and m.end() < len(part)):
            return (part[: m.end()] if m else part).strip()
        n *= 4


def _heading_title(doc: Document) -> str:
    """A parsed page's title: its first heading with words. Why (the stop-76 lead, helper
    ingest77): a Markdown page opening with an empty ``# `` heading (openvswitch's
    ``what-is-ovs.md``: ``# `` over ``## Overview``) has an empty first heading, and its
    title was its first line that is no marker, taken with its marks: ``## Overview``."""
    return doc.title or next((h for h in doc.headings if h), "")


def title_of(text: str, kind: str) -> str:
    """The title: the first heading with words (Markdown, HTML, reST), a code file's docstring
    or leading comment, else the first non-empty line (:func:`_first_line_title`)."""
    if kind in {"markdown", "html", "rst"}:
        title = _heading_title(parse(text, kind))
        if title:
            return title
    if kind == "code":
        lines = text.split("\n", 400)[:400]
        for pattern in (_DOCSTRING, _LINE_COMMENT):
            for ln in lines:
                m = pattern.match(ln)
                if m:
                    return _clip(m.group(1).strip().strip("\"'"), 120)
    return _first_line_title(text, kind in {"markdown", "html"})


def _no_title(line: str, tables: bool) -> bool:
    """Whether a stripped line is no title: a rule or adornment (``=====``), comment marks
    alone or with an RCS keyword (:func:`_says_nothing`), or, in Markdown / HTML
    (``tables``), a table row (``| gm animate``: helper ingest77)."""
    return adornment_char(line) is not None or _says_nothing(line) or (tables and line[:1] == "|")


def _first_line_title(text: str, tables: bool = False) -> str:
    """The first non-blank line among the first 400 that is a title (:func:`_no_title`),
    clipped to 120 characters, else "". ``tables``: the text is Markdown or HTML, whose
    table rows (``| cell | cell``) are no title. Why (the stop-76 lead, helper ingest77):
    GraphicsMagick's converted pages open with a one-cell table row per page (``|`` /
    ``|  gm animate`` / ``|``) and were titled ``| gm animate``: the title is the first line
    after them that is one, the abstract's sentence the page's first prose (which never
    held a table row)."""
    # Without cutting the text into lines or copying it: what precedes the first non-space
    # character is the blank lines before it, and the clip reads only a bounded prefix of
    # the line (``_clip``: 120 * 4 + 64). Each line skipped is read once, so the search
    # stays linear.
    at, newlines = 0, 0
    while (first := _NON_SPACE.search(text, at)) is not None:
        newlines += text.count("\n", at, first.start())
        if newlines >= 400:
            return ""
        start = first.start()
        line = text[start : start + 120 * 4 + 64].partition("\n")[0].strip()
        if not _no_title(line, tables):
            return _clip(line, 120)
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        whole = text[start:end].strip()
        if not _no_title(whole, tables):
            return _clip(line, 120)  # (a longer line, not all one mark nor all marks)
        at = end
    return ""


_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,6}$")
_SEPARATORS = re.compile(r"[-_]+")


@functools.lru_cache(maxsize=1 << 14)
def humanize(name: str) -> str:
    """``feature-store_v2.md`` -> ``feature store v2``.

    Memoised: a directory's overview names each child, and a re-add re-describes every
    directory above a change with all of its children; sibling folders repeat names."""
    stem = _EXTENSION.sub("", name)
    return _SEPARATORS.sub(" ", stem).strip()


# A name that only identifies: a UUID (``3f2a9b1c-8d4e-4abc-9def-0123456789ab``, humanized with
# spaces; LangGraph's memory tools key every item by ``uuid4()``), or a run of 16 or more hex
# digits (a SHA-1 / MD5 / Mongo ObjectId, a UUID's ``hex``); a store item's leading ``@`` too.
_OPAQUE_NAME = re.compile(
    r"@?(?:[0-9a-fA-F]{8}(?: [0-9a-fA-F]{4}){3} [0-9a-fA-F]{12}|[0-9a-fA-F]{16,})"
)


def child_line(c: ChildSummary) -> str:
    """A directory overview's line for one child: ``- name: abstract``, or ``- abstract`` when
    the name carries no words (an id, :data:`_OPAQUE_NAME`) and the abstract has some: with
    uuid4 keys a third of a namespace's overview was key hex, in the directory's vector and
    in what a reader sees, and the overview's cut came a third earlier."""
    label = humanize(c.name)
    if c.abstract and _OPAQUE_NAME.fullmatch(label):
        return f"- {c.abstract}"
    return f"- {label}: {c.abstract}"


class ExtractiveSummarizer:
    """The default summariser: headings and first sentences, bounded in length.

    ``abstracts_as_read``: whether a file's and a directory's abstract keep their first
    sentence as written (:data:`ABSTRACTS_AS_READ`; ``None``, the default: that module
    setting, read at each summary). Anything but a bool or ``None`` is an
    :class:`~treehop.errors.InvalidConfigError` here, before any text is read, not a
    truthy value silently taken for ``True``."""

    abstracts_as_read: bool | None = None
    """Also a class default: a subclass whose ``__init__`` skips this one's still reads it."""

    def __init__(self, abstracts_as_read: bool | None = None) -> None:
        if abstracts_as_read is not None and not isinstance(abstracts_as_read, bool):
            raise InvalidConfigError(
                "abstracts_as_read must be True, False or None, "
                f"got {type(abstracts_as_read).__name__}"
            )
        self.abstracts_as_read = abstracts_as_read

    def _as_read(self) -> bool:
        """This summariser's setting, else :data:`ABSTRACTS_AS_READ` (read now)."""
        if self.abstracts_as_read is None:
            return ABSTRACTS_AS_READ
        return self.abstracts_as_read

    def summarize_file(self, name: str, text: str, kind: str) -> tuple[str, str]:
        outline: list[str] = []
        headed = False  # the title is a heading's, which the first sentence skips
        commented = False  # a commented configuration or script, named by its file name
        if kind in {"markdown", "html"} and not could_have_heading(text):
            title = _first_line_title(text, tables=True)  # what the parse below would come to
        elif kind in {"markdown", "html", "rst"}:
            doc = parse(text, kind)
            title = _heading_title(doc)
            headed = bool(title)
            title = title or _first_line_title(text, tables=kind != "rst")
            outline = [h for h in doc.headings if h]  # (an empty ``# `` heading is no entry)
        elif (
            kind == "text"
            and COMMENT_BLOCKS_READ
            and (lead := _NON_SPACE.search(text)) is not None
            and text[lead.start()] == "#"
            and (comments := _opening_comments(text)) is not None
        ):
            # A commented configuration or script: no line of it is a title, and its
            # words are in its comments.
            title, text, commented = "", comments, True
        else:
            title = title_of(text, kind)
            if kind == "code":
                for ln in text.split("\n"):
                    m = _CODE_DEF.match(ln)
                    if m:
                        outline.append(m.group(1))
        sent = first_sentence(text, kind, as_read=self._as_read())
        # A title that is only a label (a plain-text entry's ``13.`` line, a ``## 3.4.``
        # heading whose question is gone) names nothing: the file's name and first sentence
        # (which starts with the label) say more.
        head = title if title and not is_label(title) else humanize(name)
        # A sentence starting with a heading's title is a sentence of the text that names
        # its subject, and the abstract whole. Why (helper usage86): the title alone was
        # kept, so Flask's ``Gunicorn`` page ("Gunicorn is a pure Python WSGI server ...")
        # was abstracted ``Gunicorn`` and its folder's overview listed ``gunicorn:
        # Gunicorn``. A title that is the text's first line (plain text, no heading) starts
        # the sentence because it is that line, and stays the abstract alone.
        # (a heading's title opens the sentence only as a whole word: ``Go`` over "Google
        # makes it." is no sentence naming its subject, and both are kept; helper review75)
        opens = sent.startswith(head) if not headed else opens_with(sent, head)
        opens = opens and not commented  # (the name is no line of the text)
        abstract = f"{head}: {sent}" if sent and not opens else sent if sent and headed else head
        if not outline and len(abstract) <= ABSTRACT_CHARS * 4 + 64:
            # The overview is the abstract, and both clips read all of it: collapse its
            # whitespace once and cut twice.
            flat = " ".join(abstract.split())
            return _cut(flat, ABSTRACT_CHARS), _cut(flat, OVERVIEW_CHARS)
        overview = abstract
        if outline:
            contents = "; ".join(dict.fromkeys(outline[:400]))
            overview += "\nContents: " + contents
        return _clip(abstract, ABSTRACT_CHARS), _clip(overview, OVERVIEW_CHARS)

    def summarize_directory(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> tuple[str, str]:
        abstract = _directory_abstract(name, children, readme, self._as_read())
        lines = [child_line(c) for c in children]
        overview = abstract + ("\n" + "\n".join(lines) if lines else "")
        return _clip(abstract, ABSTRACT_CHARS), overview[:OVERVIEW_CHARS]

    def directory_children_enough(
        self, name: str, children: Sequence[ChildSummary], readme: str | None
    ) -> bool:
        """Whether :meth:`summarize_directory` of ``children`` followed by any further children
        gives the same texts as of ``children`` alone (see :class:`BoundedSummarizer`).

        The abstract reads the first 4 children (without a README); the overview is the
        abstract and one line per child, cut at :data:`OVERVIEW_CHARS`: once the lines of
        the children read so far reach the cut, a later child's line lies past it. False
        for a subclass that writes directories its own way (it may read every child)."""
        if type(self).summarize_directory is not ExtractiveSummarizer.summarize_directory:
            return False
        if not readme and len(children) < 4:
            return False
        size = len(_directory_abstract(name, children, readme, self._as_read()))
        for c in children:
            size += len(child_line(c)) + 1  # "\n" + the line
            if size >= OVERVIEW_CHARS:
                return True
        return False


def opens_with(sentence: str, title: str) -> bool:
    """Whether ``sentence`` opens with ``title`` as a whole word: ``Gunicorn is ...`` with
    ``Gunicorn``, not ``Google makes it.`` with ``Go``. Constant time.

    Why (helper review75): a sentence that opens with its heading's title is the abstract
    whole (helper usage86); a prefix of its first word (``Go`` / ``Google``, ``C`` /
    ``Cython``, ``Git`` / ``GitHub``) named no subject, and the title was dropped from the
    abstract (before usage86 the sentence was)."""
    if not sentence.startswith(title):
        return False
    n = len(title)
    if n == 0 or n == len(sentence):
        return True
    return not (_word_char(title[-1]) and _word_char(sentence[n]))


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _directory_abstract(
    name: str, children: Sequence[ChildSummary], readme: str | None, as_read: bool = False
) -> str:
    """A directory's abstract before its clip: its own page's title (else the folder's name)
    and first sentence, else the folder's name and the first parts of its first 4 children's
    abstracts.

    Why the page's title: a folder's on-disk name is often one a reader does not know it by
    (a Debian manual's ``en``, a Sphinx build's ``html``), where its index page says what it
    is (``aptitude user's manual``); the abstract is what a reader sees of the folder and
    what its parent's overview lists. The name stays in the URI and the parent's overview."""
    label = humanize(name)
    if readme:
        kind = "rst" if looks_like_rst(readme) else "markdown"
        use = kind == "rst" or could_have_heading(readme)
        title = _heading_title(parse(readme, kind)) if use else ""
        sentence = first_sentence(readme, kind, as_read=as_read)
        if title and not is_label(title):
            title = " ".join(title.split())[:ABSTRACT_CHARS]
            # (a sentence starting with the title is kept whole: summarize_file's rule)
            return (
                f"{title}: {sentence}"
                if sentence and not opens_with(sentence, title)
                else sentence or title
            )
        return f"{label}: {sentence or title_of(readme, kind)}"
    firsts = [c.abstract.split(":")[0] for c in children[:4] if c.abstract]
    return f"{label}: " + "; ".join(firsts) if firsts else label


def is_readme(name: str) -> bool:
    return bool(_README.match(name))
