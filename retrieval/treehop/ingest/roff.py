"""Man pages (roff, the ``man`` macros) as the text ``man`` shows: a folder's walk reads a file
named as a manual section (``mutt.1``, ``muttrc.5.gz``, ``Foo::Bar.3pm``) whose requests open
with ``.TH`` through :func:`roff_page_markdown`, as Markdown (``# NAME(section)``, ``##`` for
``.SH``, ``###`` for ``.SS``, fonts and comments dropped).

Why (helper usage87): Debian's ``/usr/share/doc/<package>`` sits beside its man pages, and a
user indexing both got the roff source: mutt's ``man/`` folder was abstracted ``'\\" t;
.\\" Project ; .\\" -*-nroff-*-``, and every passage held ``.TP``, ``\\fB``, ``.BI``.
The reader was the benchmark's (``bench/natural_sets.py`` builds its man-page corpora with
it since heldout18), moved here unchanged so both read a page alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_ROFF_ESCAPE = re.compile(r"\\(\(..|f[BIPRC]|f\(..|[-\\&|_e^ ])")
_ROFF_NAMED = {"(aq": "'", "(dq": '"', "(em": "--", "(en": "-", "(bu": "*", "(co": "(C)"}
_ROFF_ARGS = re.compile(r'"([^"]*)"|(\S+)')
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)\s*$")


def roff_inline(text: str) -> str:
    """A roff line's text without its escapes: font changes dropped, ``\\-`` a hyphen,
    ``\\\\`` a backslash, ``\\(aq`` and the other named characters as ASCII."""

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] == "f":
            return ""
        if code[0] == "(":
            return _ROFF_NAMED.get(code, "")
        return {"-": "-", "\\": "\\", "e": "\\", " ": " ", "_": "_"}.get(code, "")

    return _ROFF_ESCAPE.sub(one, text)


def roff_lines(lines: Iterable[str]) -> Iterator[tuple[str, list[str], str]]:
    """The lines of a roff page a reader of its text reads, each as (the request's or
    macro's name, its arguments, the line): comments (``.\\"``) and empty requests (a lone
    ``.``) left out; a line of text has the name ``""`` and no arguments. The one reading of
    a line that :func:`roff_page_markdown` (man) and :func:`mdoc_page_markdown` (mdoc) share.
    """
    for raw in lines:
        if raw.startswith(('.\\"', "'\\\"")) or raw.strip() in {".", "'"}:
            continue
        if not raw.startswith((".", "'")):
            yield "", [], raw
            continue
        name, _, rest = raw[1:].strip().partition(" ")
        yield name, [a or b for a, b in _ROFF_ARGS.findall(rest)], raw


def roff_page_markdown(roff: str) -> str:
    """A man page in roff (libcurl's: ``.TH``, ``.SH``, ``.IP``/``.TP`` items, ``.nf``/``.fi``
    examples, ``.B``/``.BR`` font macros, ``\\fI..\\fP`` escapes) -> markdown, as a reader of
    ``man`` sees the text: ``# NAME(section)`` from ``.TH``, ``## `` for ``.SH`` and ``### ``
    for ``.SS``, an ``.IP``/``.TP`` item's tag a paragraph of its own over its text,
    ``.nf``..``.fi`` a fenced block, the font macros' arguments joined (``.BR`` and the other
    alternating ones without spaces, as roff sets them), comments and layout requests
    (``.RS``, ``.ad``, ``.sp``) dropped. Enough for the pages of one package, not all roff
    (no ``.so``, tables or conditionals).

    Running text keeps roff's input lines (markdown joins them into one paragraph, as roff
    fills them), but a line that is only ``=`` or only ``-`` right after a text line is
    joined to that line with a space: on a line of its own a markdown reader takes it for a
    setext underline and makes the line above a heading. mc(1) sets the file-type marks in
    running text, ``.B =`` then "for sockets,", ``.B \\-`` then "for character devices,"
    ("... @ for links, = for sockets, - for ..."): written one per line, "for sockets," became
    a heading over the rest of its chapter (helper heldout18's finding)."""
    out: list[str] = []
    fence = False
    tag_next = False
    # The marks joined to a line (by its index in ``out``), joined to it once at the end:
    # joined one by one, a run of them copied the growing line for each (helper review77:
    # quadratic, a page of 40,000 ``=`` lines took seconds, the 5 MB a file may hold hours).
    joined: dict[int, list[str]] = {}

    def text(line: str) -> None:
        """A line of running text (or of a fenced example, kept as it is)."""
        if not fence and _SETEXT_UNDERLINE.match(line) and out and out[-1].strip():
            joined.setdefault(len(out) - 1, [out[-1]]).append(line.strip())
        else:
            out.append(line)

    for name, args, raw in roff_lines(roff.split("\n")):
        if name:
            if name == "TH" and args:
                out += [f"# {roff_inline(args[0])}({args[1] if len(args) > 1 else ''})", ""]
            elif name in {"SH", "SS"}:
                level = "##" if name == "SH" else "###"
                out += ["", f"{level} {roff_inline(' '.join(args))}", ""]
            elif name == "nf" and not fence:
                out += ["", "```"]
                fence = True
            elif name == "fi" and fence:
                out += ["```", ""]
                fence = False
            elif name in {"PP", "P", "LP", "sp"}:
                out.append("")
            elif name == "IP":
                out += ["", roff_inline(args[0]), ""] if args else [""]
            elif name == "TP":
                out.append("")
                tag_next = True
            elif name in {"B", "I", "SM", "BR", "RB", "BI", "IB", "IR", "RI"}:
                text(roff_inline((" " if len(name) == 1 or name == "SM" else "").join(args)))
                if tag_next:  # a .TP item's tag set in a font
                    out.append("")
                    tag_next = False
            continue  # .br, .RS, .RE, .ad and the rest: layout only
        text(roff_inline(raw))
        if tag_next:
            out.append("")
            tag_next = False
    if fence:
        out.append("```")
    for at, parts in joined.items():
        out[at] = " ".join(parts)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


_MAN_SECTION = re.compile(r"\.[1-9][a-z]{0,5}\Z")
"""A manual section as a file's extension: ``.1``, ``.5``, ``.3pm``, ``.1ssl``, ``.3perl``."""
MAN_PROBE_LINES = 400
"""A man page's ``.TH`` is looked for among its first this many lines (a Pod::Man page
defines its string and macro preamble first: about 130 lines)."""


def is_man_page(name: str, text: str) -> bool:
    """Whether ``text``, a file named ``name`` (its ``.gz`` already taken off), is a man page
    in the ``man`` macros: the name ends in a manual section (:data:`_MAN_SECTION`) and a
    ``.TH`` request comes within its first :data:`MAN_PROBE_LINES` lines, before any ``.so``
    or mdoc macro (a preamble of comments, strings and macro definitions may precede it). A
    ``.so`` redirect, an mdoc page (``.Dd``) and a text that merely ends in ``.1`` are not.
    Reads a bounded prefix: constant time."""
    if _MAN_SECTION.search(name) is None:
        return False
    head = text[: MAN_PROBE_LINES * 200].split("\n", MAN_PROBE_LINES)[:MAN_PROBE_LINES]
    for request, _args, _raw in roff_lines(head):
        if request == "TH":
            return True
        if request in {"so", "Dd", "Dt", "Sh"}:
            return False
    return False


_DEFINITION = re.compile(r"[.'][ \t]*(?:de|de1|am|am1|ig)(?:[ \t]|$)")
"""A request that opens a macro definition or an ignored block, read up to its ``..`` line."""
_QUOTE_STRINGS = re.compile(r"\\\*(?:\(lq|\(rq|\[lq\]|\[rq\])")
_EXAMPLE_MACROS = {".EX": ".nf", ".EE": ".fi"}


def man_page_markdown(roff: str) -> str:
    """A man page (:func:`is_man_page`) as Markdown, as a folder's walk reads it:
    :func:`roff_page_markdown` after a pass that leaves out macro definitions and ignored
    blocks (``.de EX`` ... ``..``: their ``.nf`` opened a code block over the page), reads
    the ``man`` macros' example block ``.EX`` / ``.EE`` as ``.nf`` / ``.fi`` and the quote
    strings ``\\*(lq`` / ``\\*(rq`` as ``"``. (The benchmark's corpora call
    :func:`roff_page_markdown` on pages their builders prepared, and are unchanged.) Linear:
    one pass over the lines."""
    out: list[str] = []
    defining = False
    for line in roff.split("\n"):
        if defining:
            defining = line.strip() != ".."
            continue
        if _DEFINITION.match(line):
            defining = True
            continue
        out.append(_EXAMPLE_MACROS.get(line.rstrip(), line))
    return roff_page_markdown(_QUOTE_STRINGS.sub('"', "\n".join(out)))
