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


_GROFF_ESCAPE = re.compile(
    r"\\(?:"
    r"(?P<font>[fF](?:\[[^\]\n]{0,40}\]|\(..|.))"
    r"|(?P<size>s[-+]?(?:\(\d\d|\[[^\]\n]{0,40}\]|'[^'\n]{0,40}'|[1-3]\d|\d))"
    r"|(?P<string>\*(?:\[[^\]\n]{0,40}\]|\(..|.))"
    r"|(?P<named>\[[^\]\n]{0,40}\]|\(..)"
    r"|(?P<quoted>[ABCDLNRSXZbhlovwx]'[^'\n]{0,200}')"
    r"|(?P<register>[$MOVgkmn][-+]?(?:\[[^\]\n]{0,40}\]|\(..|.))"
    r"|(?P<comment>[\"#].*)"
    r"|(?P<one>.)"
    r")"
)
r"""One groff escape (groff(7)) where a line of a man page has one: a font (``\fB``,
``\f(CW``, ``\f[B]``, ``\f[]``, ``\f5``), a size (``\s-1``, ``\s0``, ``\s[+2]``), a string
(``\*(Aq``, ``\*[lq]``), a named character (``\(em``, ``\[aq]``, ``\[u00E9]``), an escape
with a quoted argument (motion ``\h'-04'``, width ``\w'...'``, device ``\X'...'``), a
register, colour or macro argument (``\n(.g``, ``\m[blue]``, ``\$1``), a comment to the
line's end (``\"``, ``\#``), else one character (``\%``, ``\&``, ``\c``, ``\e``, ``\\``).
Every argument is bounded: one pass over the line."""
_NAMED_CHARS = {
    "aq": "'", "dq": "\\(dq", "lq": "\\(dq", "rq": "\\(dq", "oq": "'", "cq": "'",
    "Lq": "\\(dq", "Rq": "\\(dq", "ga": "`", "ha": "^", "ti": "~", "rs": "\\\\",
    "sl": "/", "ba": "|", "br": "|", "hy": "-", "mi": "-", "en": "-", "em": "--",
    "bu": "*", "ci": "o", "co": "(C)", "rg": "(R)", "tm": "(TM)", "pl": "+",
    "mu": "x", "di": "/", "eq": "=", "<=": "<=", ">=": ">=", "!=": "!=", "->": "->",
    "<-": "<-", "+-": "+-", "fm": "'", "sd": "\\(dq", "dg": "+", "lB": "[", "rB": "]",
    "lC": "{", "rC": "}", "la": "<", "ra": ">", "at": "@", "sh": "#", "Do": "$",
    "ct": "c", "de": "\u00b0", "ss": "\u00df", "ul": "_", "ru": "_", "pc": ".",
}  # fmt: skip
r"""Named characters (groff_char(7)) as ``man`` shows them in ASCII; a double quote as
``\(dq`` and a backslash as ``\\``, which :func:`roff_inline` reads after a request's
arguments are split (a ``"`` here would end a quoted argument). Any other name: nothing."""
_STRINGS = {
    "lq": "\\(dq", "rq": "\\(dq", "L\"": "\\(dq", "R\"": "\\(dq", "C`": "\\(dq",
    "C'": "\\(dq", "Aq": "'", "aq": "'", "C+": "C++", "R": "(R)", "Tm": "(TM)",
    "PI": "pi",
}  # fmt: skip
r"""The strings the ``man`` macros and Pod::Man define (``\*(lq``, ``\*(C+``, ``\*(Aq``), as
``man`` shows them; any other string: nothing."""
_ONE_CHAR = {
    "t": "\t", "E": "\\e", "'": "'", "`": "`", "c": "",
    "%": "", "&": "", ":": "", ")": "", "/": "", ",": "", "^": "", "|": "", "d": "",
    "u": "", "a": "", "{": "", "}": "", "z": "", "p": "", "r": "", "!": "", "?": "",
}  # fmt: skip
r"""One-character escapes as ``man`` shows them: ``\%`` (a hyphenation mark), ``\&`` and
``\:`` (zero width), ``\/`` ``\,`` ``\^`` ``\|`` (spacing), ``\d`` ``\u`` (half-line
motion), ``\{`` ``\}`` (a conditional's braces) are nothing; ``\ ``, ``\~`` and ``\0`` an
unbreakable space (:data:`_SPACE`). ``\-``, ``\\``, ``\e`` and ``\_`` are left to
:func:`roff_inline`; any other character is itself, as groff prints an unknown escape."""
_KEPT = frozenset("-\\e_")
_JOIN = "\ue000"
r"""Where a line ended in ``\c`` (the next line's text continues it without a space)."""
_SPACE = "\ue001"
r"""An unbreakable space (``\ ``, ``\~``, ``\0``) until the page is read: one argument of a
request (``.BI \-C \ cmdlist`` is ``-C cmdlist``; split at it, ``-C\cmdlist``)."""


def _groff_escapes_out(line: str, join: str, space: str) -> str:
    r"""A man page's line without the groff escapes :func:`roff_inline` does not read
    (:data:`_GROFF_ESCAPE`), as ``man`` shows them: fonts (``\f[B]``, ``\f5``), sizes,
    strings, named characters, motions, registers, ``\%``, ``\&``, ``\c`` (``join``, or
    nothing), ``\"`` comments; an unbreakable space is ``space``. A text line whose first
    character would now open a request (``\&.profile``, ``\fB.B``) keeps a leading ``\&``.
    One pass."""

    def one(m: re.Match[str]) -> str:
        kind = m.lastgroup
        code = m.group(0)[1:]
        if kind == "named":
            name = code[1:-1] if code[0] == "[" else code[1:]
            if name[:1] == "u" and 5 <= len(name) <= 7:  # ``\[u00E9]``
                try:
                    char = chr(int(name[1:], 16))
                except ValueError:
                    return ""
                if char == "\0" or "\ud800" <= char <= "\udfff":
                    # (no character: a surrogate is no scalar value, and the page's text
                    # failed to encode when written, UnicodeEncodeError out of
                    # ``add_resource``; helper review78b)
                    return ""
                return "\\\\" if char == "\\" else "\\(dq" if char == '"' else char
            return _NAMED_CHARS.get(name, "")
        if kind == "string":
            name = code[2:-1] if code[1] == "[" else code[2:] if code[1] == "(" else code[1]
            return _STRINGS.get(name, "")
        if kind == "one":
            if code == "c":
                return join
            if code in {" ", "~", "0"}:
                return space
            return m.group(0) if code in _KEPT else _ONE_CHAR.get(code, code)
        return ""  # a font, size, motion, register, colour or comment

    out = _GROFF_ESCAPE.sub(one, line) if "\\" in line else line
    if line[:1] not in {".", "'"} and out[:1] in {".", "'"}:
        out = "\\&" + out  # (still a line of text)
    return out


_DEFINITION = re.compile(r"[.'][ \t]*(?:de|de1|am|am1|ig)(?:[ \t]|$)")
"""A request that opens a macro definition or an ignored block, read up to its ``..`` line."""
_EXAMPLE_MACROS = {".EX": ".nf", ".EE": ".fi"}


def man_page_markdown(roff: str) -> str:
    """A man page (:func:`is_man_page`) as Markdown, as a folder's walk reads it:
    :func:`roff_page_markdown` after a pass that leaves out macro definitions and ignored
    blocks (``.de EX`` ... ``..``: their ``.nf`` opened a code block over the page), reads
    the ``man`` macros' example block ``.EX`` / ``.EE`` as ``.nf`` / ``.fi`` and the quote
    strings ``\\*(lq`` / ``\\*(rq`` as ``"``, and the groff escapes :func:`roff_inline` leaves
    in the text (``\\%``, ``\\f[B]``, ``\\f5``, ``\\s-1``, ``\\c``, ``\\(hy``, ``\\[aq]``: helper
    usage87's finding, fixed by helper ingest77) as ``man`` shows them
    (:func:`_groff_escapes_out`): dropped, a ``\\c`` line joined to the next without a
    space, a line ending in a lone ``\\`` continued on the next. (The benchmark's corpora
    call :func:`roff_page_markdown` on pages their builders prepared, and are unchanged.)
    Linear: one pass over the lines."""
    out: list[str] = []
    defining = False
    join = _JOIN if _JOIN not in roff else ""
    space = _SPACE if _SPACE not in roff else "\\ "
    continued: list[str] = []  # the lines before this one, each ending in a lone ``\``
    for line in roff.split("\n"):
        if defining:
            defining = line.strip() != ".."
            continue
        if _DEFINITION.match(line):
            defining = True
            continue
        if (len(line) - len(line.rstrip("\\"))) % 2:  # an escaped newline: read on
            continued.append(line[:-1])
            continue
        if continued:
            line = "".join(continued) + line
            continued = []
        macro = _EXAMPLE_MACROS.get(line.rstrip())
        out.append(macro if macro is not None else _groff_escapes_out(line, join, space))
    if continued:
        out.append(_groff_escapes_out("".join(continued), join, space))
    page = roff_page_markdown("\n".join(out))
    if join:  # a ``\\c`` joins the next line of text (not across a blank one)
        page = re.sub(_JOIN + "[ \t]*\n(?=[^\n])", "", page).replace(_JOIN, "")
    return page.replace(_SPACE, " ") if space == _SPACE else page
