"""Reading files from disk: which files are text, how they decode, what is skipped and why."""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import uri as urimod
from .._fdread import read_to_end
from ..errors import IngestError, InputTooLargeError, InvalidQueryError
from ..redaction import redact
from ..validation import is_blank, unneeded_format_at
from .exclude import NO_EXCLUDE, Exclude
from .markup import html_to_markdown, looks_like_rst
from .roff import is_man_page, man_page_markdown

MARKDOWN_EXT = {".md", ".markdown", ".mdx"}
RST_EXT = {".rst", ".rest"}
TEXT_EXT = {".txt", ".text", ".adoc", ".org", ".csv", ".tsv", ".log", ""}
CODE_EXT = {
    ".py",
    ".js",
    ".ts",
    ".tsx",
    ".jsx",
    ".java",
    ".go",
    ".rs",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".cs",
    ".rb",
    ".php",
    ".swift",
    ".kt",
    ".scala",
    ".sh",
    ".bash",
    ".sql",
    ".r",
    ".lua",
    ".pl",
    ".yaml",
    ".yml",
    ".toml",
    ".json",
    ".ini",
    ".cfg",
    ".xml",
    ".css",
    ".scss",
}
HTML_EXT = {".html", ".htm", ".xhtml"}
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    "node_modules",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".idea",
    ".vscode",
    ".treehop",
}
SKIP_SUFFIXES: frozenset[str] = frozenset(
    {".css", ".scss", ".sass", ".less", ".map", ".svg", ".js", ".mjs"}
)
"""Suffixes a *folder* ingest passes over by default: a page's style sheets, source maps,
vector images and scripts. Why: in a documentation tree they are the site's machinery, not
its text: a DocBook manual's ``aptitude.css`` was indexed as a two-chunk source file whose
CSS comment headed the folder's overview, and a Sphinx build's ``searchindex.js`` (72 kB of
one JSON line) and ``jquery.js`` became hundreds of chunks. ``.js`` / ``.mjs`` are skipped
only where the walk also holds HTML pages (a built site); in a tree without HTML (a
JavaScript project) they are read as code. A file given by itself is always read, and
``Treehop(skip_suffixes=...)`` (``treehop index --skip-suffixes``) sets the list (``()``:
read every text file). In a walk holding HTML pages, a Sphinx build's ``_sources/*.txt``
(each page's source again) is skipped too, as are its generated pages and ``viewcode``'s
``_modules/`` source pages beside its ``searchindex.js``, MkDocs'
``search/search_index.json`` beside its ``sitemap.xml.gz``, and Hugo's, Docusaurus' and
Jekyll's search data at the top of a site whose ``index.html`` names that generator
(``_site_search_data``). Skipped files are named in
``AddResult.skipped_other``."""
SITE_ONLY_SUFFIXES = frozenset({".js", ".mjs"})
"""The members of a skip list that are skipped only in a walk holding HTML pages."""


def check_skip_suffixes(value: object) -> frozenset[str]:
    """``value`` as a set of lower-case suffixes (``.css``), or :class:`InvalidQueryError` naming
    what is wrong. A lone string is refused: ``skip_suffixes=".css"`` would otherwise be read
    as the characters ``.``, ``c``, ``s``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
        raise InvalidQueryError(
            "skip_suffixes must be a list of file suffixes such as ['.css', '.js'] "
            f"(() reads every text file), got {type(value).__name__}"
        )
    # (the built-in type's length, not a subclass's own __len__)
    builtin: Any = next(t for t in (list, tuple, set, frozenset) if isinstance(value, t))
    size = builtin.__len__(value)
    if size > 1000:
        raise InvalidQueryError(f"skip_suffixes holds {size} suffixes; at most 1000")
    try:
        items = list(value)  # (read once: a subclass's __iter__ may raise or change)
    except Exception as e:
        raise InvalidQueryError(
            f"skip_suffixes could not be read as a list ({type(e).__name__})"
        ) from None
    out = set()
    for s in items:
        # (a str subclass's own lower / replace / isalnum could answer anything: read as str)
        s = str.__str__(s) if isinstance(s, str) else s
        if (
            not isinstance(s, str)
            or not 2 <= len(s) <= 32
            or s[0] != "."
            or not s[1:].replace("-", "").replace("_", "").isalnum()
            or not s.isascii()
        ):
            shown = redact(repr(s)[:40]) if isinstance(s, str) else type(s).__name__
            raise InvalidQueryError(
                f"skip_suffixes: {shown} is not a file suffix (a dot and 1-31 letters or "
                "digits, such as '.css')"
            )
        out.add(s.lower())
    return frozenset(out)


_SPHINX_SOURCES = "_sources/"


def _is_sphinx_copy(rel: str) -> bool:
    """Whether ``rel`` is a Sphinx build's copy of a page's source (``_sources/x.rst.txt``,
    ``.md.txt``, ``.txt``): the built page beside it holds the same text, and both were
    indexed, so every answer came twice."""
    return rel.startswith(_SPHINX_SOURCES) or f"/{_SPHINX_SOURCES}" in rel


_SPHINX_MARK = "searchindex.js"
"""The file every Sphinx HTML build writes beside its pages (the search page's index)."""
_SPHINX_GENERATED = re.compile(r"(?:search|genindex(?:-[^/]{1,40})?|py-modindex)\.html")
"""The pages a Sphinx build generates from no source of its own: the search page ("Search",
"Please activate JavaScript ..."), the general index (every indexed term once more, split
per letter as ``genindex-A.html`` on large builds) and Python's module index. Why skipped
(helper leftovers65b): in a folder's walk they were indexed as pages, the index pages holding
the words of every other page (usage72's ``search.html`` a one-line leaf; the bench's set
builders leave them out for the same reason)."""


def _sphinx_generated(rel: str, marked: set[str]) -> bool:
    """Whether ``rel`` is one of Sphinx's generated pages (:data:`_SPHINX_GENERATED`) in a
    folder of ``marked`` (those holding ``searchindex.js``: a Sphinx build, so that a site's
    own ``search.html`` elsewhere is read)."""
    folder, _, name = rel.rpartition("/")
    return folder in marked and _SPHINX_GENERATED.fullmatch(name.lower()) is not None


_SPHINX_MODULES = "_modules/"
"""Where Sphinx's ``viewcode`` writes each module's highlighted source as a page (beside
``searchindex.js``). Why skipped (helper leftovers65d): it is the package's code again, its
docstrings the API pages' text again (every answer twice, as with ``_sources/``), and one
span per token of markup; the code itself is read from the project, not its build."""
_MKDOCS_INDEX = "search/search_index.json"
"""MkDocs' search index: every page's text once more, as one JSON document."""
_MKDOCS_MARK = "sitemap.xml.gz"
"""The file every MkDocs build writes at its site's top (beside ``search/``): the marker
that tells MkDocs' ``search/search_index.json`` from a user's own file of that name."""


def _in_generated_tree(rel: str, marked: set[str], part: str) -> bool:
    """Whether ``rel`` lies at ``<folder>/<part>...`` for a ``folder`` of ``marked``."""
    if rel.startswith(part):
        return "" in marked
    at = rel.find(f"/{part}")
    while at >= 0:
        if rel[:at] in marked:
            return True
        at = rel.find(f"/{part}", at + 1)
    return False


def _is_mkdocs_index(rel: str, marked: set[str]) -> bool:
    """Whether ``rel`` is ``<folder>/search/search_index.json`` for a ``folder`` of ``marked``
    (those holding MkDocs' ``sitemap.xml.gz``)."""
    if not rel.lower().endswith(_MKDOCS_INDEX):
        return False
    head = rel[: -len(_MKDOCS_INDEX)]
    return (head == "" or head.endswith("/")) and head[:-1] in marked


_SITE_SEARCH = re.compile(
    r"(?:(?:assets/)?js/|assets/)?"
    r"(?:[a-z]{2}(?:[-_][a-z]{2,4})?\.)?"
    r"(?:index|search|lunr|search[-_]?(?:index|data|doc)|lunr[-_]index|offline-search-index)"
    r"(?:[-.][0-9a-z]{1,64}){0,4}\.json"
)
"""The search data a static-site generator writes at its site's top (or under
``assets/js/``, ``assets/``, ``js/``) as one JSON document of every page's text: Hugo's
home page JSON output (``index.json``, what its search themes read), Docsy's
``offline-search-index.<hash>.json``, Docusaurus' local-search plugins
(``search-index.json``, ``search-index-<hash>.json``, ``search-doc-<n>.json``,
``lunr-index-<n>.json``), Jekyll's ``search.json`` / ``search_data.json`` and Just the
Docs' ``assets/js/search-data.json``; a language prefix (``en.``) or a hash suffix allowed.
Matched against a path relative to the site's top folder, lower-cased."""
_META_TAG = re.compile(r"<meta\b[^>]{0,600}>", re.I)
_SITE_GENERATORS = re.compile(r"content\s*=\s*[\"']?(?:hugo|docusaurus|jekyll)\b", re.I)
_GENERATOR_SNIFF = 32_768
"""How much of a site's top ``index.html`` is read for its generator (the ``<head>``)."""


def _site_generated(root: str, folder: str) -> bool:
    """Whether ``folder``'s ``index.html`` (under the walk's ``root``) says in its
    ``<meta name="generator">`` that Hugo, Docusaurus or Jekyll built it (each writes that tag:
    Docusaurus always, Hugo's and Jekyll's themes through ``hugo.Generator`` and
    ``jekyll-seo-tag``). The marker that tells their search data from a user's own
    ``index.json`` / ``search.json``: only a generator's site folder holds one."""
    path = os.path.join(root, folder, "index.html") if folder else os.path.join(root, "index.html")
    try:
        with open(path, "rb") as f:
            head = f.read(_GENERATOR_SNIFF).decode("utf-8", "replace")
    except OSError:
        return False
    return any(
        "generator" in m.group().lower() and _SITE_GENERATORS.search(m.group()) is not None
        for m in _META_TAG.finditer(head)
    )


def _site_search_data(rels: list[str], root: str) -> set[str]:
    """The files of a walk (relative paths) that are a Hugo / Docusaurus / Jekyll build's
    search data (:data:`_SITE_SEARCH` below a folder whose ``index.html`` names one of them
    as its generator, :func:`_site_generated`). Each folder's page is read once, and only
    for a folder holding such a name."""
    pages = {r.rpartition("/")[0] for r in rels if r.rpartition("/")[2].lower() == "index.html"}
    found: set[str] = set()
    checked: dict[str, bool] = {}
    for r in rels:
        low = r.lower()
        if not low.endswith(".json"):
            continue
        parts = low.split("/")
        for depth in (1, 2, 3):  # (the site's top: this file's folder, or 1-2 levels up)
            if depth > len(parts):
                break
            folder = "/".join(r.split("/")[: len(parts) - depth])
            if folder not in pages or not _SITE_SEARCH.fullmatch("/".join(parts[-depth:])):
                continue
            if folder not in checked:
                checked[folder] = _site_generated(root, folder)
            if checked[folder]:
                found.add(r)
                break
    return found


def _sphinx_folders(rels: list[str]) -> set[str]:
    """The folders of a walk that hold ``searchindex.js`` (``""``: the top)."""
    return {r.rpartition("/")[0] for r in rels if r.rpartition("/")[2].lower() == _SPHINX_MARK}


def skipped_for_suffix(rel: str, skip: frozenset[str]) -> bool:
    """Whether a walk skipping ``skip`` would leave ``rel`` out for its suffix (or as a
    Sphinx ``_sources/`` copy or generated page), so that a report can say why (the CLI's
    "page assets"). (A generated page's name is enough here: ``rel`` was skipped.)"""
    ext = os.path.splitext(inner_name(rel))[1].lower()
    if not skip:
        return False
    if ext in skip or (ext == ".txt" and _is_sphinx_copy(rel)):
        return True
    low = rel.lower()
    if low == _MKDOCS_INDEX or low.endswith(f"/{_MKDOCS_INDEX}"):
        return True
    if ext == ".json" and any(
        _SITE_SEARCH.fullmatch("/".join(low.split("/")[-d:])) for d in (1, 2, 3)
    ):
        return True  # (a static-site generator's search data, :func:`_site_search_data`)
    if ext == ".html" and (low.startswith(_SPHINX_MODULES) or f"/{_SPHINX_MODULES}" in low):
        return True
    return _SPHINX_GENERATED.fullmatch(rel.rpartition("/")[2].lower()) is not None


def _compressed_copies(rels: list[str]) -> set[str]:
    """The ``.gz`` files of a walk whose uncompressed original is in the same walk
    (``sitemap.xml.gz`` beside ``sitemap.xml``): the same text twice, every answer twice."""
    plain = set(rels)
    return {r for r in rels if r.lower().endswith(GZIP_SUFFIX) and inner_name(r) in plain}


def drop_skipped_suffixes(
    rels: list[str], skip: frozenset[str], report: LoadReport, root: str | None = None
) -> npt.NDArray[np.bool_] | None:
    """Which of a folder walk's files ``skip`` keeps (None: all of them), the others named
    in ``report.skipped_other``. A member of :data:`SITE_ONLY_SUFFIXES` counts only when the
    walk holds an HTML page, as does a Sphinx build's ``_sources/`` copy of its pages
    (:func:`_is_sphinx_copy`; kept with an empty skip list), and so does a Hugo / Docusaurus
    / Jekyll build's search data (:func:`_site_search_data`; read from ``root``, the walk's
    folder: without it, not looked for). A compressed file counts by the name it holds
    (``app.css.gz`` as ``app.css``), and one whose original lies beside it is a copy
    (:func:`_compressed_copies`; kept with an empty skip list)."""
    if not skip or not rels:
        return None
    # One lower-cased string of the walk and substring tests (C loops): a re-add of 100k
    # files with nothing to skip answers here; splitting every name took 0.6 s of it.
    names = "\n".join(rels).lower() + "\n"
    site = any(f"{x}\n" in names for x in HTML_EXT)
    drop = skip if site else skip - SITE_ONLY_SUFFIXES
    copies = site and _SPHINX_SOURCES in names
    marked = _sphinx_folders(rels) if site and f"{_SPHINX_MARK}\n" in names else set()
    modules = bool(marked) and _SPHINX_MODULES in names
    # (MkDocs: the folders holding its sitemap.xml.gz; its search index lies under them)
    mkdocs = (
        {r.rpartition("/")[0] for r in rels if r.rpartition("/")[2].lower() == _MKDOCS_MARK}
        if site and f"{_MKDOCS_INDEX}\n" in names and f"{_MKDOCS_MARK}\n" in names
        else set()
    )
    # (Hugo / Docusaurus / Jekyll: their search data, told by each site's index.html)
    searched = (
        _site_search_data(rels, root)
        if site and root is not None and ".json\n" in names and "index.html\n" in names
        else set()
    )
    # (a compressed copy beside its original: MkDocs' sitemap.xml.gz, a doc shipped twice)
    gz = f"{GZIP_SUFFIX}\n" in names
    packed = _compressed_copies(rels) if gz else set()
    if (
        not copies
        and not marked
        and not mkdocs
        and not searched
        and not packed
        and not any(f"{x}\n" in names or (gz and f"{x}{GZIP_SUFFIX}\n" in names) for x in drop)
    ):
        return None
    suffixes = [os.path.splitext(inner_name(r) if gz else r)[1].lower() for r in rels]
    keep = np.fromiter(
        (
            x not in drop
            and not (packed and r in packed)
            and not (copies and x == ".txt" and _is_sphinx_copy(r))
            and not (marked and x == ".html" and _sphinx_generated(r, marked))
            and not (modules and x == ".html" and _in_generated_tree(r, marked, _SPHINX_MODULES))
            and not (mkdocs and x == ".json" and _is_mkdocs_index(r, mkdocs))
            and not (searched and x == ".json" and r in searched)
            for r, x in zip(rels, suffixes, strict=True)
        ),
        dtype=np.bool_,
        count=len(rels),
    )
    report.skipped_other.extend(r for r, k in zip(rels, keep.tolist(), strict=True) if not k)
    return keep


MAX_DIR_DEPTH = 250
"""The deepest directory ``add_resource`` reads below the directory it is given: with the
target's own segments, a file and a chunk, every URI it writes must stay within
:data:`treehop.uri.MAX_URI_DEPTH`. A deeper tree is an :class:`~treehop.errors.IngestError`
before anything is read or written (the writer lowers the limit by the target's depth)."""
MAX_FILE_BYTES = 5_000_000
"""The largest file (and the largest text given to ``add_resource(..., is_text=True)``,
``add_memory`` or ``add_skill``), in bytes of UTF-8: 5 MB. A larger file in a directory is
skipped and listed in ``AddResult.skipped_other``; a larger single file or text raises
:class:`~treehop.errors.InputTooLargeError`. Why a cap at all: ingest is linear in the input
(about a second per MB on one core, ``bench/bench_ingest.py --part linear``), but one file is
embedded and tagged in one call, and a cap keeps a single call's time and memory bounded."""


_PAGE_NAV = re.compile(
    r"Prev[ \t]{0,3}Up[ \t]{0,3}[^\n]{0,200}?Home[ \t]{0,3}Next"
    r"|Prev[ \t]{0,3}Up[ \t]{0,3}Next[^\n]{0,300}?Home"
)
"""DocBook's page navigation as text extraction leaves it (PostgreSQL's and many other
manuals): the header ``Prev Up <chapter> Home Next`` and the footer ``Prev Up Next <title>
Home <title>``, often glued to the words around them (``PrivilegesPrev UpChapter 5. Data
DefinitionHome Next``). Bounded, so the scan stays linear."""


def strip_page_navigation(text: str) -> str:
    """``text`` without DocBook page-navigation runs (see :data:`_PAGE_NAV`).

    Why: a page saved as text by an HTML loader (LangChain's, a copy from a browser) keeps
    the navigation bar; it became every page's abstract (``5.7. PrivilegesPrev Up...``) and
    glued words became tags (``administrationhome``). The HTML reader drops the bar with
    the markup; this is for text that arrives without it."""
    if "Prev" not in text:
        return text
    return _PAGE_NAV.sub("\n", text)


def check_text_size(text: str, what: str = "text", max_bytes: int = MAX_FILE_BYTES) -> None:
    """Raise :class:`InputTooLargeError` when ``text`` is over ``max_bytes`` of UTF-8.

    Counted without encoding the whole text when the answer is clear from its length (a
    character is 1 to 4 bytes), so a 100 MB string is rejected without a 100 MB copy."""
    if len(text) * 4 <= max_bytes:
        return
    if len(text) > max_bytes or len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise InputTooLargeError(
            f"{what} is larger than the {max_bytes:,}-byte limit (max_file_bytes: "
            "Treehop(max_file_bytes=...), treehop index --max-file-bytes); split it into "
            "several files or texts, or raise the limit"
        )


@dataclass
class LoadedFile:
    """A text file ready to become a leaf (or a chunked file node)."""

    relpath: str
    text: str
    kind: str  # markdown | rst | text | code | html (html is converted to Markdown text)
    title: str = ""
    """The page title of an HTML file (``<title>``), else empty."""


@dataclass
class LoadReport:
    """What a directory walk read and what it skipped, with reasons."""

    files: list[LoadedFile] = field(default_factory=list)
    skipped_binary: list[str] = field(default_factory=list)
    skipped_unreadable: list[str] = field(default_factory=list)
    skipped_large: list[str] = field(default_factory=list)
    skipped_empty: list[str] = field(default_factory=list)
    skipped_other: list[str] = field(default_factory=list)
    skipped_dirs: list[str] = field(default_factory=list)
    skipped_hidden: list[str] = field(default_factory=list)
    skipped_names: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    """Files and folders (``name/``) a folder walk's ``exclude`` patterns left out."""
    read_as_cp1252: list[str] = field(default_factory=list)
    """Files read as Windows-1252 (:func:`decode`'s last resort): a user can check them."""


_UNSHOWN_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Control characters, C1 included, and the bidirectional embeddings, overrides and isolates.
A C1 CSI (``\x9b``) in a file's name went into its URI and out to the terminal through
``treehop ls`` / ``find`` as an escape sequence; a right-to-left override made
``\u202edm.exe.md`` show as ``dm.exe.md`` reversed (a file passing as another)."""


def _addressable(name: str) -> bool:
    """A name that can become a URI segment: valid UTF-8, free of control characters and
    of bidirectional formatting characters (see :data:`_UNSHOWN_NAME`), and of what a new
    URI may not hold (:func:`treehop.uri.unshown_in_new`: line separators, a zero-width
    space...), so a folder's file is skipped where an add naming it is refused.

    One pass: ``str.isprintable`` (in C) holds for the usual name, ASCII or not, and every
    character refused below is unprintable (Cc, Cs, Zl, Zp, Cf); only a name with an
    unprintable character (a no-break space, a joiner...) is walked, once. (It was an
    encode, two searches of the same characters and a walk of every non-ASCII name.)"""
    if name.isprintable():
        return True
    for i, ch in enumerate(name):
        if ch.isprintable():
            continue
        cat = unicodedata.category(ch)
        # controls (C1 included), lone surrogates (undecodable bytes, as os keeps them),
        # U+2028 / U+2029; a format character (the bidi ones included) unless a needed joiner
        if cat in _REFUSED_CATEGORIES or (cat == "Cf" and unneeded_format_at(name, i)):
            return False
    return True


def _walkable(name: str) -> bool:
    """:func:`_addressable`, and not decoding out of its segment (``x%2Fy.md``,
    ``a\\b.md``, ``%2E%2E``: :func:`treehop.uri.name_leaves_root`): a folder's entry so
    named was indexed at a URI that every read, ``ls`` and ``remove`` refused (the add
    itself names a single file or folder by its target, ``AsyncTreehop._target_for``)."""
    if ("%" in name or "\\" in name) and urimod.name_leaves_root(name):
        return False
    return _addressable(name)


_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_PLAIN = frozenset("%\\")
"""Characters a printable ASCII name must not hold to skip :func:`_walkable` (a ``%``
or ``\\`` may decode out of the name's segment)."""


def _printable(rel: str) -> str:
    """A path for a report: undecodable bytes as ``\\xNN``, control characters escaped."""
    raw = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _UNSHOWN_NAME.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 256 else f"\\u{ord(m[0]):04x}", raw
    )


def html_to_text(html: str) -> str:
    """The visible text of an HTML page as Markdown-shaped text (see :func:`html_to_markdown`)."""
    return html_to_markdown(html)[0]


def kind_of(path: Path | str) -> str | None:
    ext = os.path.splitext(path)[1].lower()
    if ext in MARKDOWN_EXT:
        return "markdown"
    if ext in RST_EXT:
        return "rst"
    if ext in HTML_EXT:
        return "html"
    if ext in CODE_EXT:
        return "code"
    if ext in TEXT_EXT:
        return "text"
    return None


def _txt_reads_as_rst(name: str, text: str) -> bool:
    return os.path.splitext(name)[1].lower() in {".txt", ".text"} and looks_like_rst(text)


_GIVEN_TEXT_KINDS = frozenset({"text", "rst", "code"})


def given_text_kind(name: str, text: str) -> str:
    """How a text given as text (``add_resource(text, is_text=True)``, a LangChain /
    LlamaIndex document, a splitter's chunks of one file) is read, by the file name it is
    stored under: plain text, reST or code as the folder walk reads a file of that name
    (:func:`kind_of`, a ``.txt`` that looks like reST as reST), anything else as Markdown.

    Why: every such text was read as Markdown, so a ``FAQ.txt`` or a ``.conf`` / ``.py``
    whose lines start with ``#`` (a shell prompt, ``# chronyd -q ...``; a comment) had them
    as headings, and the file's title, abstract and chunk titles were a command line
    (chrony's FAQ added through LlamaIndex's store: ``chronyd -q 'pool pool.ntp.org iburst':
    Frequently Asked Questions ...``), where the same file added from its folder is titled
    ``Frequently Asked Questions``. A name with no suffix (an id, ``note``) stays Markdown,
    and so does HTML: its markup is converted before it gets here."""
    if not os.path.splitext(name)[1]:
        return "markdown"
    kind = kind_of(name)
    if kind not in _GIVEN_TEXT_KINDS:
        return "markdown"
    return "rst" if kind == "text" and _txt_reads_as_rst(name, text) else kind


GZIP_SUFFIX = ".gz"
"""A gzip-compressed file is read as the file it holds (``FAQ.gz`` as ``FAQ``,
``guide.md.gz`` as Markdown), within the same :data:`MAX_FILE_BYTES` once decompressed. Why:
Debian and most Linux distributions ship a package's documentation compressed
(``/usr/share/doc/<pkg>/FAQ.gz``, ``README.gz``, ``NEWS.gz``): chrony's doc folder held ten
files, and the five compressed ones (its FAQ and README among them) were skipped as binary.
A compressed copy beside its original (``sitemap.xml.gz`` next to ``sitemap.xml``) is
skipped as a copy (:func:`drop_skipped_suffixes`)."""
_GZIP_MAGIC = b"\x1f\x8b"


def inner_name(path: str) -> str:
    """The name a compressed file's content goes by (``FAQ.md.gz`` -> ``FAQ.md``): what
    decides how it is parsed and whether a skip list skips it; any other name as given."""
    return path[: -len(GZIP_SUFFIX)] if path.lower().endswith(GZIP_SUFFIX) else path


def gunzip(data: bytes, limit: int) -> bytes | None:
    """The bytes a gzip file holds (every member, as ``gzip -d`` reads them), at most
    ``limit + 1`` of them (more than ``limit``: the caller's "too large"), or None when
    ``data`` is not a whole gzip stream (another format named ``.gz``, corrupt, truncated).

    Why bounded: a few kilobytes of gzip can hold gigabytes (a bomb); zlib's ``max_length``
    stops the inflation at the bound, so the work is linear in what is returned. Bytes after
    the last member are ignored when they are zeros (tar-style padding) and make the file
    unreadable otherwise.

    Each member is fed in pieces that double from :data:`_GUNZIP_FIRST_PIECE` bytes, never
    the whole rest of the file: zlib copies what follows a member's end into
    ``unused_data``, so feeding the rest made a file of many small members quadratic (20,000
    empty members, 400 kB: 0.31 s, four times as many 12 times that); a piece at most twice
    the member (or the first piece) keeps the copying linear."""
    out: list[bytes] = []
    total, pos, end = 0, 0, len(data)
    view = memoryview(data)
    while pos < end:
        if not data.startswith(_GZIP_MAGIC, pos):
            # (only zeros may follow the last member; none of a file that is no gzip at all)
            return b"".join(out) if out and data.count(0, pos) == end - pos else None
        inflater = zlib.decompressobj(wbits=31)
        step = _GUNZIP_FIRST_PIECE
        while True:
            piece = view[pos : pos + step]
            try:
                chunk = inflater.decompress(piece, limit + 1 - total)
            except zlib.error:
                return None
            out.append(chunk)
            total += len(chunk)
            if total > limit:
                return b"".join(out)
            if inflater.eof:
                pos += len(piece) - len(inflater.unused_data)
                break
            pos += len(piece)  # (all of it read: the output stayed under its bound)
            if pos >= end:  # (the input ended inside the member: truncated)
                return None
            step = min(step * 2, _GUNZIP_MAX_PIECE)
    return b"".join(out) if out else None


_GUNZIP_FIRST_PIECE = 256
_GUNZIP_MAX_PIECE = 1 << 20


def _byte_escapes() -> dict[int, str]:
    """``U+DC80 + b`` (how ``surrogateescape`` keeps a byte ``b`` UTF-8 could not decode) ->
    that byte's Windows-1252 character (Latin-1's for the five bytes 1252 leaves undefined)."""
    out = {}
    for b in range(0x80, 0x100):
        try:
            out[0xDC00 + b] = bytes([b]).decode("cp1252")
        except UnicodeDecodeError:
            out[0xDC00 + b] = chr(b)
    return out


_BYTE_ESCAPES = _byte_escapes()
# C0 control bytes that text does not hold (tab, newlines, form feed, vertical tab, backspace
# (man pages' overstrike) and escape (ANSI colours in a log) are text), and DEL.
_BINARY_CONTROLS = bytes(sorted(set(range(0x20)) - {0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B}))
_BINARY_CONTROLS += b"\x7f"
# At most 1 such byte in 100 for legacy-encoded text: random bytes (a compressed or
# encrypted blob without a NUL in its head) hold about 1 in 9.
_MAX_CONTROL_SHARE = 100
# At most 1 byte in 4 that UTF-8 cannot decode: Western European text in Latin-1 holds a
# few in 100 (French about 4, Icelandic under 15); an image's raw pixels (a PBM icon) or a
# Greek / Cyrillic / Chinese legacy text (which Windows-1252 would read wrongly) holds more:
# left binary. (Bytes of valid UTF-8 sequences do not count: a UTF-8 file with a stray
# Latin-1 byte is read.)
_MAX_ESCAPED_SHARE = 4
_ESCAPED = re.compile("[\udc80-\udcff]")
_HIGH_BYTES = bytes(range(0x80, 0x100))
# Formats whose head is not UTF-8 and may hold no NUL in its first bytes (a test's stub, a
# PDF with uncompressed streams): never read as legacy text.
_BINARY_MAGIC = (b"%PDF-", b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"PK\x03\x04", b"\x7fELF")


def _legacy_text(data: bytes) -> str | None:
    """Text in a legacy 8-bit encoding, or None when the bytes look binary.

    Why: a Debian doc folder, an old FAQ or a Windows user's notes are often Latin-1 or
    Windows-1252 (``é`` as the byte E9, ``“`` as 93); they were skipped as binary, the text a
    user came for never read. UTF-8 is still read first and wins where it decodes; here each
    byte UTF-8 cannot decode is read as its Windows-1252 character (Latin-1's superset, what
    browsers read a page labelled Latin-1 as), so a mostly UTF-8 file with one stray Latin-1
    byte keeps its UTF-8 characters. Bytes with many control characters, or with many bytes
    UTF-8 cannot decode, stay binary. Linear: one decode, then one Windows-1252 decode (no
    UTF-8 sequence in it) or one ``subn`` over the escaped bytes."""
    if data.startswith(_BINARY_MAGIC):
        return None
    controls = len(data) - len(data.translate(None, _BINARY_CONTROLS))
    if controls * _MAX_CONTROL_SHARE > len(data):
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", "surrogateescape")
    if len(text) == len(data):
        # No UTF-8 sequence at all (the usual Latin-1 file): every byte past ASCII is
        # escaped, and the whole is Windows-1252 (C speed; a str.translate of the escapes
        # cost 0.4 s a megabyte).
        escaped = len(data) - len(data.translate(None, _HIGH_BYTES))
        if escaped * _MAX_ESCAPED_SHARE > len(data):
            return None
        # (its 5 undefined bytes escaped, then read as Latin-1's characters)
        return _ESCAPED.sub(_escaped_char, data.decode("cp1252", "surrogateescape"))
    out, escaped = _ESCAPED.subn(_escaped_char, text)
    if escaped * _MAX_ESCAPED_SHARE > len(data):
        return None
    return out


def _escaped_char(m: re.Match[str]) -> str:
    return _BYTE_ESCAPES[ord(m.group())]


def decode(data: bytes) -> str | None:
    """UTF-8 (with BOM), else UTF-16 with BOM, else a legacy 8-bit text read as Windows-1252
    (Latin-1's superset, see :func:`_legacy_text`), else None (treated as binary)."""
    return decode_how(data)[0]


def decode_how(data: bytes) -> tuple[str | None, bool]:
    """:func:`decode`'s text and whether it was read as Windows-1252. Why: that read is a
    guess (a Shift-JIS or KOI8 file that is mostly ASCII reads with its other characters
    wrong), so a folder's report names the files read so and the user can check them."""
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
    if b"\x00" in data[:8192] and not utf16:
        return None, False
    if not data.startswith(b"\xef\xbb\xbf"):
        # What "utf-8-sig" does without a BOM, minus its Python-level codec wrapper (a
        # visible share of reading a tree of small files).
        try:
            return data.decode("utf-8"), False
        except UnicodeDecodeError:
            pass
    for enc in ("utf-8-sig", "utf-16"):
        if enc == "utf-16" and not utf16:
            continue
        try:
            return data.decode(enc), False
        except UnicodeDecodeError:
            continue
    if utf16:
        return None, False  # (a UTF-16 mark over bytes that are not UTF-16: binary)
    text = _legacy_text(data)
    return text, text is not None


_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    # (a FIFO swapped in after the scan: the open returns at once instead of waiting for a
    # writer; no effect on a regular file)
    | getattr(os, "O_NONBLOCK", 0)
)
_READ_CHUNK = 1 << 16


_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


_BY_DIR_FD = os.open in os.supports_dir_fd and bool(_NO_FOLLOW) and hasattr(os, "O_DIRECTORY")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_below(path: str, below: int) -> int:
    """Open ``path``, whose last ``below`` folders lie below the scanned top, one level at a
    time: the top by name (the caller named it: a link there is followed), then each folder
    and the file through its parent's descriptor with ``O_NOFOLLOW``. Why (helper
    attacks67): ``O_NOFOLLOW`` checks the last component only, so a *folder* of the tree
    swapped for a symlink to outside it (``sub`` -> ``~/.ssh``) between the scan and the
    read was followed and the outside file (``sub/id_rsa``) indexed; here that open fails
    (``ELOOP`` / ``ENOTDIR``) and the file is skipped as unreadable."""
    parts = path.split(os.sep)
    top = os.sep.join(parts[: -below - 1]) or os.sep
    return _open_through(os.open(top, _DIR_FLAGS), parts[-below - 1 : -1], parts[-1])


def _open_through(fd: int, folders: Sequence[str], name: str) -> int:
    """Open ``name`` below ``folders`` below the folder open as ``fd``, each folder and the
    file through its parent's descriptor with ``O_NOFOLLOW``; ``fd`` and every folder
    opened on the way are closed, whether the open succeeds or fails. The one walk
    :func:`_open_below` and :meth:`FolderCursor.open` (past its kept folders) both make."""
    try:
        for folder in folders:
            inner = os.open(folder, _DIR_FLAGS | _NO_FOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(name, _READ_FLAGS | _NO_FOLLOW, dir_fd=fd)
    finally:
        os.close(fd)


class FolderCursor:
    """Opens files below one scanned top as :func:`_open_below` does (each folder through
    its parent's descriptor with ``O_NOFOLLOW``, the file too), but keeps the descriptors of
    the last file's folders open for the next: a read loop in the scan's order (each
    folder's files together) opens each folder once instead of once per file.

    Why (helper perf61): :func:`_open_below` reopened the top and every folder for each
    file, about 19 us a file three folders deep (helper attacks67's cost of closing the
    swapped-folder hole). Kept descriptors are as safe: a descriptor names the folder that
    was opened (below the top, no link followed), not a path; a folder swapped for a
    symlink after it was opened is not followed (its files are read from the folder opened,
    or not found if it was deleted), and one swapped before it is opened fails as before
    (``ELOOP`` / ``ENOTDIR``). Bounded: at most :attr:`KEPT` folders are kept open (a
    deeper file's folders below them are opened for it alone, then closed). Use it as a
    context manager, in one thread."""

    KEPT = 32
    """The most folder descriptors kept open (the top included); a tree may be 250 deep."""

    def __init__(self) -> None:
        self._top: str | None = None
        self._names: list[str] = []
        """The kept folders' names below the top, outermost first."""
        self._fds: list[int] = []
        """The top's descriptor, then one per name in :attr:`_names`."""

    def __enter__(self) -> FolderCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every kept descriptor."""
        fds, self._fds, self._names, self._top = self._fds, [], [], None
        for fd in reversed(fds):
            os.close(fd)

    def open(self, path: str, below: int) -> int:
        """A read descriptor of ``path``, whose last ``below`` folders lie below the top
        (the rest of ``path``, opened by name: the caller named it).

        Out of descriptors (``EMFILE`` / ``ENFILE``), the kept ones are let go and ``path``
        is opened as :func:`_open_below` does, two at a time. Why (helper attacks69): a
        process near its descriptor limit (a server's sockets, ``ulimit -n``) read every
        file with :func:`_open_below`, but the cursor's kept folders used the last free
        descriptors and each deeper file was skipped as unreadable (a tree 40 deep with 16
        free: 23 of 40 files left out of the index)."""
        try:
            return self._open(path, below)
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
        self.close()
        return _open_below(path, below)

    def _open(self, path: str, below: int) -> int:
        parts = path.split(os.sep)
        top = os.sep.join(parts[: -below - 1]) or os.sep
        folders = parts[-below - 1 : -1]
        if top != self._top:
            self.close()
            self._fds.append(os.open(top, _DIR_FLAGS))
            self._top = top
        names = self._names
        same = 0
        for a, b in zip(names, folders, strict=False):
            if a != b:
                break
            same += 1
        while len(names) > same:
            names.pop()
            os.close(self._fds.pop())
        deeper = len(names)
        while deeper < len(folders) and len(self._fds) < self.KEPT:
            self._fds.append(
                os.open(folders[deeper], _DIR_FLAGS | _NO_FOLLOW, dir_fd=self._fds[-1])
            )
            names.append(folders[deeper])
            deeper += 1
        if deeper == len(folders):
            return os.open(parts[-1], _READ_FLAGS | _NO_FOLLOW, dir_fd=self._fds[-1])
        fd = os.open(folders[deeper], _DIR_FLAGS | _NO_FOLLOW, dir_fd=self._fds[-1])
        return _open_through(fd, folders[deeper + 1 :], parts[-1])


def _read_bytes(
    path: Path | str,
    limit: int | None = None,
    *,
    follow: bool = True,
    below: int = 0,
    folders: FolderCursor | None = None,
) -> bytes:
    """A file's bytes, opened by name: no ``Path`` object per file (ingest reads every file
    of a tree through here; tests replace it to stand in for an unreadable file).

    Plain ``os.read`` calls until end of file: ``open(path, "rb").read()`` builds two file
    objects and asks ``fstat``/``lseek`` first, which cost more than reading a small file.
    ``limit``: read at most this many bytes. Why: the scan's size is checked before the read,
    and a file grown or swapped (for a larger one, a link to ``/dev/zero``) in between was
    read to its end, without bound.

    ``follow=False``: a symlink is not opened (``OSError``, ``ELOOP``). Why: a directory's
    scan keeps regular files only (symlinks skipped), and each is opened by name after the
    scan; a file swapped for a link to outside the tree (``~/.ssh/id_rsa``) in between was
    read and indexed (helper attacks66). ``below``: with ``follow=False``, how many folders
    of ``path``'s end lie below the scanned top (a file's relative path has ``below``
    slashes): each is opened through its parent's descriptor, none followed
    (:func:`_open_below`), or through ``folders`` (a :class:`FolderCursor`: its folders'
    descriptors kept for the next file)."""
    if follow:
        fd = os.open(path, _READ_FLAGS)
    elif folders is not None and _BY_DIR_FD:
        fd = folders.open(str(path), below)
    elif below > 0 and _BY_DIR_FD:
        fd = _open_below(str(path), below)
    else:
        fd = os.open(path, _READ_FLAGS | _NO_FOLLOW)
    try:
        return read_to_end(fd, limit, _READ_CHUNK)
    finally:
        os.close(fd)


def read_file(
    path: Path | str,
    relpath: str,
    report: LoadReport,
    max_bytes: int = MAX_FILE_BYTES,
    size: int | None = None,
    *,
    follow: bool = True,
    folders: FolderCursor | None = None,
) -> LoadedFile | None:
    """Read and decode one file, or record why it is skipped (``size``: its known size;
    ``follow=False`` for a file a directory's scan found: a symlink swapped in since is
    skipped as unreadable, not followed; ``folders``: the read loop's
    :class:`FolderCursor`, used for such files only)."""
    kind = kind_of(path)
    try:
        size = os.stat(path).st_size if size is None else size
        if size > max_bytes:
            report.skipped_large.append(relpath)
            return None
        data = _read_bytes(
            path, max_bytes + 1, follow=follow, below=relpath.count("/"), folders=folders
        )
    except OSError:
        report.skipped_unreadable.append(relpath)
        return None
    if len(data) > max_bytes:  # (grown or swapped since it was sized)
        report.skipped_large.append(relpath)
        return None
    name = str(path)
    if data.startswith(_GZIP_MAGIC) and name.lower().endswith(GZIP_SUFFIX):
        inner = gunzip(data, max_bytes)
        if inner is None:
            report.skipped_binary.append(relpath)
            return None
        if len(inner) > max_bytes:
            report.skipped_large.append(relpath)
            return None
        data, name = inner, inner_name(name)
        kind = kind_of(name)
    text, legacy = decode_how(data)
    if text is None:
        report.skipped_binary.append(relpath)
        return None
    if kind is None:
        kind = "text"
    title = ""
    if kind == "html":
        text, title = html_to_markdown(text)
    elif kind == "text" and _txt_reads_as_rst(name, text):
        kind = "rst"  # Sphinx sources are often .txt (Django, CPython)
    elif kind == "text" and is_man_page(os.path.basename(name), text):
        # a man page (``muttrc.5.gz``) as ``man`` shows it, not its roff source
        text, kind = man_page_markdown(text), "markdown"
    if kind in ("text", "markdown", "rst"):
        text = strip_page_navigation(text)
    if is_blank(text):  # (only invisible characters: empty too)
        report.skipped_empty.append(relpath)
        return None
    if legacy:
        report.read_as_cp1252.append(relpath)
    return LoadedFile(relpath=relpath, text=text, kind=kind, title=title)


@dataclass(frozen=True)
class FileEntry:
    """A file a walk would read, with what ``stat`` said (for skipping unchanged files)."""

    relpath: str
    path: str
    size: int
    mtime_ns: int


def depth_left(target_uri: str) -> int:
    """How many directory levels below it an ``add_resource`` at ``target_uri`` may write:
    its URIs, with a file and a chunk segment, stay within ``uri.MAX_URI_DEPTH``."""
    used = target_uri.split("://", 1)[-1].rstrip("/").count("/") + 1
    return max(0, min(MAX_DIR_DEPTH, urimod.MAX_URI_DEPTH - used - 2))


def walk(
    root: Path,
    max_bytes: int = MAX_FILE_BYTES,
    max_depth: int = MAX_DIR_DEPTH,
    skip_suffixes: frozenset[str] = SKIP_SUFFIXES,
    exclude: Exclude = NO_EXCLUDE,
) -> LoadReport:
    """Read every text file under ``root`` (sorted, hidden and tool directories skipped).

    A single file over ``max_bytes`` raises :class:`InputTooLargeError`; inside a directory it
    is skipped and reported."""
    entries, report = scan(root, max_bytes, max_depth, skip_suffixes, exclude)
    with FolderCursor() as folders:
        for e in entries:
            single = e.path == str(root)
            f = read_file(
                e.path,
                e.relpath,
                report,
                max_bytes,
                e.size,
                follow=single,
                folders=folders,
            )
            if f is not None:
                report.files.append(f)
    return report


def scan(
    root: Path,
    max_bytes: int = MAX_FILE_BYTES,
    max_depth: int = MAX_DIR_DEPTH,
    skip_suffixes: frozenset[str] = SKIP_SUFFIXES,
    exclude: Exclude = NO_EXCLUDE,
) -> tuple[list[FileEntry], LoadReport]:
    """The files :func:`walk` would read, in its order, with their size and mtime, without
    reading any: what an incremental re-add compares with its manifest before reading.
    The report holds what was skipped by name or type (nothing read yet)."""
    found, report = scan_columns(root, max_bytes, max_depth, skip_suffixes, exclude)
    sizes, mtimes = found.sizes.tolist(), found.mtimes.tolist()
    entries = [
        FileEntry(rel, found.path(i), sizes[i], mtimes[i]) for i, rel in enumerate(found.rels)
    ]
    return entries, report


@dataclass
class Scanned:
    """What :func:`scan_columns` found: one entry per file, in walk order, as columns.

    Why columns: a re-add of a 100k-file tree compares every file's stat with its manifest;
    as arrays that is one vectorised comparison instead of 100k objects and dict lookups."""

    top: str
    """The scanned directory (or, for a single file, the file itself: ``single``)."""
    single: bool
    rels: list[str]
    """Relative paths, ``/``-separated."""
    sizes: npt.NDArray[np.int64]
    mtimes: npt.NDArray[np.int64]
    dir_of: npt.NDArray[np.int64]
    """Index into ``dirs`` of each file's directory."""
    dirs: list[str]
    """Relative path of every directory the walk listed (``""``: the top), walk order."""

    def path(self, i: int) -> str:
        """The filesystem path of file ``i``."""
        return self.top if self.single else f"{self.top}{os.sep}{self.rels[i]}"

    def __len__(self) -> int:
        return len(self.rels)


def scan_columns(
    root: Path,
    max_bytes: int = MAX_FILE_BYTES,
    max_depth: int = MAX_DIR_DEPTH,
    skip_suffixes: frozenset[str] = SKIP_SUFFIXES,
    exclude: Exclude = NO_EXCLUDE,
) -> tuple[Scanned, LoadReport]:
    """:func:`scan` as columns: a preorder walk (a directory's files sorted by name, then its
    subdirectories sorted, as ``os.walk`` top-down), one ``lstat`` per file (``os.scandir``
    classifies entries without one), nothing read. Symlinked directories are not entered;
    directories that cannot be listed are passed over, as ``os.walk`` does. Files with a
    suffix in ``skip_suffixes`` are left out of a folder's walk (:data:`SKIP_SUFFIXES`), as
    are files and folders ``exclude`` matches (:mod:`treehop.ingest.exclude`; a folder it
    matches is not entered). A file given by itself is read whatever either says."""
    if not root.exists():
        raise IngestError(f"path does not exist: {root}")
    report = LoadReport()
    i64 = np.int64
    if root.is_file():
        rels: list[str] = []
        sizes: list[int] = []
        mtimes: list[int] = []
        if not _addressable(root.name):
            report.skipped_names.append(_printable(root.name))
        else:
            try:
                st = root.stat()
                size, mtime = st.st_size, st.st_mtime_ns
            except OSError:
                size, mtime = 0, 0
            if size > max_bytes:
                raise InputTooLargeError(
                    f"{root.name} is {size:,} bytes, over the {max_bytes:,}-byte limit "
                    "(max_file_bytes: Treehop(max_file_bytes=...), treehop index "
                    "--max-file-bytes)"
                )
            rels, sizes, mtimes = [root.name], [size], [mtime]
        return Scanned(
            str(root),
            True,
            rels,
            np.asarray(sizes, i64),
            np.asarray(mtimes, i64),
            np.zeros(len(rels), i64),
            [""],
        ), report
    rels, sizes, mtimes = [], [], []
    dirs: list[str] = []
    counts: list[int] = []
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        path, rel_dir = stack.pop()
        if rel_dir and rel_dir.count("/") >= max_depth:
            raise IngestError(
                f"{_printable(rel_dir[:120])}... is more than {max_depth} directories deep "
                "(each URI may have treehop.uri.MAX_URI_DEPTH segments); nothing was written"
            )
        dir_fd = _open_dir(path)
        try:
            with os.scandir(path if dir_fd is None else dir_fd) as it:
                listed = list(it)
        except OSError:
            if dir_fd is not None:
                os.close(dir_fd)
            continue
        try:
            _scan_listed(
                listed, path, rel_dir, rels, sizes, mtimes, dirs, counts, stack, report, exclude
            )
        finally:
            # (after every stat and type check of the listing: they are relative to it)
            if dir_fd is not None:
                os.close(dir_fd)
    dir_of = np.repeat(np.arange(len(dirs), dtype=i64), np.asarray(counts, i64))
    size_col, mtime_col = np.asarray(sizes, i64), np.asarray(mtimes, i64)
    keep = drop_skipped_suffixes(rels, skip_suffixes, report, str(root))
    if exclude:
        # (only when patterns were given: the usual walk pays nothing)
        out = np.fromiter(map(exclude.file, rels), np.bool_, len(rels))
        if keep is not None:
            out &= keep  # (a file the suffix list skipped is named there, once)
        if out.any():
            report.excluded.extend(compress(rels, out.tolist()))
            keep = ~out if keep is None else keep & ~out
    if keep is not None:
        rels = [r for r, k in zip(rels, keep.tolist(), strict=True) if k]
        size_col, mtime_col, dir_of = size_col[keep], mtime_col[keep], dir_of[keep]
    return Scanned(str(root), False, rels, size_col, mtime_col, dir_of, dirs), report


_SCAN_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")
"""Directories are listed through an open descriptor where the platform allows it: each
entry's ``lstat`` is then an ``fstatat`` relative to it, which resolves one name instead of
the whole path (~10% of a re-add's scan of 100k files here)."""


def _open_dir(path: str) -> int | None:
    """A read descriptor of directory ``path`` (None: list it by path; an error to come from
    the listing itself)."""
    if not _SCAN_BY_FD:
        return None
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None


def _scan_listed(
    listed: list[os.DirEntry[str]],
    path: str,
    rel_dir: str,
    rels: list[str],
    sizes: list[int],
    mtimes: list[int],
    dirs: list[str],
    counts: list[int],
    stack: list[tuple[str, str]],
    report: LoadReport,
    exclude: Exclude = NO_EXCLUDE,
) -> None:
    """One directory of :func:`scan_columns`: its files' columns appended, its
    subdirectories pushed."""
    skipped_dirs, skipped_hidden = report.skipped_dirs, report.skipped_hidden
    skipped_names, skipped_other = report.skipped_names, report.skipped_other
    is_reg = stat.S_ISREG
    prefix = f"{rel_dir}/" if rel_dir else ""
    subdirs: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for e in listed:
        try:
            is_dir = e.is_dir()
        except OSError:
            is_dir = False
        (subdirs if is_dir else files).append(e)
    before = len(rels)
    files.sort(key=_entry_name)
    stats = _plain_stats(files)
    if stats is not None:
        # Every file has an ordinary visible name and is a regular file: what the loop
        # below would keep, in one pass per column.
        rels.extend(map(prefix.__add__, [e.name for e in files]))
        sizes.extend([st.st_size for st in stats])
        mtimes.extend([st.st_mtime_ns for st in stats])
        files = []
    for e in files:
        name = e.name
        if not (name.isascii() and name.isprintable() and _PLAIN.isdisjoint(name)) and not (
            _walkable(name)
        ):
            skipped_names.append(_printable(prefix + name))
            continue
        if name[0] == ".":
            skipped_hidden.append(prefix + name)
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            skipped_other.append(prefix + name)
            continue
        if not is_reg(st.st_mode):  # symlinks, sockets, devices
            skipped_other.append(prefix + name)
            continue
        rels.append(prefix + name)
        sizes.append(st.st_size)
        mtimes.append(st.st_mtime_ns)
    dirs.append(rel_dir)
    counts.append(len(rels) - before)
    enter: list[tuple[str, str]] = []
    for e in sorted(subdirs, key=_entry_name):
        d = e.name
        if d in SKIP_DIRS or d.startswith(".") or not _walkable(d):
            # Counted and named in AddResult.skipped_dirs: nothing is skipped silently.
            skipped_dirs.append(_printable(prefix + d))
        elif exclude and exclude.folder(prefix + d):
            report.excluded.append(f"{prefix}{d}/")  # (its subtree is not walked)
        elif not e.is_symlink():
            enter.append((os.path.join(path, d), prefix + d))
    stack += reversed(enter)


def _entry_name(e: os.DirEntry[str]) -> str:
    return e.name


def _plain_stats(files: list[os.DirEntry[str]]) -> list[os.stat_result] | None:
    """The ``lstat`` of each file when every name is printable ASCII and not hidden and every
    entry is a regular file, else None (then :func:`scan_columns` checks them one by one).

    Why: a re-add stats every file of the tree; the per-file checks in Python cost a third
    as much as the ``lstat`` calls themselves, and nearly every folder passes them all."""
    names = "/".join(e.name for e in files)
    if (
        not (names.isascii() and names.isprintable())
        or ("/" + names).find("/.") >= 0
        or not _PLAIN.isdisjoint(names)
    ):
        return None
    try:
        stats = [e.stat(follow_symlinks=False) for e in files]
    except OSError:
        return None
    is_reg = stat.S_ISREG
    return stats if all(is_reg(st.st_mode) for st in stats) else None
