"""Turning a directory (or a text) into tree nodes.

Directories become non-leaf nodes (L0 abstract + L1 overview), short files become leaves (L2),
long files become a file node whose ordered chunks are leaves. Each node gets a content hash of
its embedding text, so that re-adding a changed directory re-embeds only what changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import uri as urimod
from .._plugins import call
from ..errors import IngestError
from ..models import ContextType, Level, Node
from ..validation import is_blank
from . import markup
from .chunking import split_text
from .loaders import (
    MAX_FILE_BYTES,
    SKIP_SUFFIXES,
    LoadedFile,
    LoadReport,
    check_text_size,
    depth_left,
    given_text_kind,
    strip_page_navigation,
    walk,
)
from .markup import unescape_converted
from .summaries import (
    ABSTRACT_CHARS,
    FROM_CHILDREN,
    OVERVIEW_FROM,
    ChildSummary,
    ExtractiveSummarizer,
    Summarizer,
    first_sentence,
    is_readme,
)

ON_SUMMARY: ContextVar[Callable[[], None] | None] = ContextVar("treehop_on_summary", default=None)
"""Called after each summary :func:`summarize` makes in this context (the writer's
:meth:`~treehop.ingest.writer.WriteLock.moved`).

Why (lead, stop 63): a directory ingest builds its tree under the client's write lock, and a
write of the same client queued behind it fails once ``lock_timeout`` passes with no
progress of the hold (helper leftovers62). Embedded batches were the only progress, so a
directory whose files an LLM summarizer describes, call after call, for longer in all than
``lock_timeout`` failed a write queued behind it that a stalled hold alone should fail. A
context variable: ``asyncio.to_thread`` carries it into the build's worker thread, and builds
outside the lock (a text, a file) set none."""


_ESCAPES = {"#": "%23", "%": "%25", "?": "%3F", "\\": "%5C"}
_ESCAPE_TABLE = str.maketrans(_ESCAPES)


def segment(name: str) -> str:
    """A file or directory name as one URI segment (only URI-structural characters escaped)."""
    out = name.translate(_ESCAPE_TABLE)
    if out in {".", ".."} or not out:
        raise IngestError(f"cannot place a file named {name!r} in the tree")
    return out


def content_hash(node: Node) -> str:
    return hashlib.sha1(node.embedding_text().encode("utf-8")).hexdigest()


_UNKNOWN = "\x00unknown"


def finalize(node: Node, parent: str | None = _UNKNOWN) -> Node:
    """Set ``node``'s content hash and ancestors. ``parent``: ``urimod.parent_of(node.uri)``
    when the caller computed it already (a file's leaf), so it is not derived twice."""
    node.content_hash = content_hash(node)
    if parent == _UNKNOWN:
        parent = urimod.parent_of(node.uri)
    node.ancestors = [] if parent is None else [*_ancestors(parent), parent]
    return node


@lru_cache(maxsize=4096)
def _ancestors(uri: str) -> tuple[str, ...]:
    """``uri.ancestors_of`` of a directory, memoised: siblings share it, and walking every
    node's chain up to the root was a visible share of building a tree of small files."""
    parent = urimod.parent_of(uri)
    return () if parent is None else (*_ancestors(parent), parent)


@dataclass
class BuiltTree:
    nodes: list[Node] = field(default_factory=list)
    report: LoadReport = field(default_factory=LoadReport)
    directories: int = 0
    files: int = 0
    chunks: int = 0


@dataclass(frozen=True)
class KeptFile:
    """A file an incremental re-add did not read: its stored nodes stay as they are, and its
    directory's summary uses its stored abstract."""

    relpath: str
    abstract: str


@dataclass
class _Dir:
    uri: str
    name: str
    subdirs: dict[str, _Dir] = field(default_factory=dict)
    files: list[LoadedFile | KeptFile] = field(default_factory=list)
    kept_abstract: str | None = None
    """Set for a directory an incremental re-add keeps as stored (nothing changed below it)."""


class TreeBuilder:
    """Builds nodes for one ``add_resource`` call."""

    def __init__(
        self,
        summarizer: Summarizer | None = None,
        chunk_chars: int = 1000,
        leaf_chars: int = 1200,
    ) -> None:
        self.summarizer = summarizer or ExtractiveSummarizer()
        self.chunk_chars = chunk_chars
        self.leaf_chars = leaf_chars
        self.max_file_bytes = MAX_FILE_BYTES
        self.skip_suffixes = SKIP_SUFFIXES

    def build_directory(self, root: Path, target_uri: str, ctype: ContextType) -> BuiltTree:
        report = walk(root, self.max_file_bytes, depth_left(target_uri), self.skip_suffixes)
        if not report.files:
            raise no_files_error(root, report)
        if root.is_file():
            out = BuiltTree(report=report)
            self._file_nodes(report.files[0], target_uri, ctype, out, as_uri=target_uri)
            return out
        return self.build_tree(root.name, target_uri, ctype, report.files, {}, report)

    def build_tree(
        self,
        name: str,
        target_uri: str,
        ctype: ContextType,
        files: Sequence[LoadedFile | KeptFile],
        kept_dirs: Mapping[str, str],
        report: LoadReport,
    ) -> BuiltTree:
        """Nodes for a directory given its files in walk order.

        For an incremental re-add, ``files`` mixes files read (new or changed) with
        :class:`KeptFile` entries, and ``kept_dirs`` (relative path -> stored abstract) names
        the directories with nothing changed below them: they and their files are left as
        stored and emit no node, and the directories above them are re-described with their
        stored abstracts. With everything read and nothing kept, it is a full build.
        """
        out = BuiltTree(report=report)
        top = _Dir(uri=target_uri, name=name)
        for rel, abstract in kept_dirs.items():
            self._place(top, rel.split("/")).kept_abstract = abstract
        for f in files:
            parts = f.relpath.split("/")
            self._place(top, parts[:-1]).files.append(f)
        self._dir_nodes(top, None, ctype, out)
        return out

    @staticmethod
    def _place(top: _Dir, parts: Sequence[str]) -> _Dir:
        d = top
        for p in parts:
            if p not in d.subdirs:
                d.subdirs[p] = _Dir(uri=urimod.join(d.uri, segment(p)), name=p)
            d = d.subdirs[p]
        return d

    def build_text(self, text: str, target_uri: str, ctype: ContextType, name: str) -> BuiltTree:
        check_text_size(text, "the text", self.max_file_bytes)
        if is_blank(text):
            raise IngestError("cannot add an empty text (no visible character)")
        out = BuiltTree()
        text = strip_page_navigation(text)
        kind = given_text_kind(name or target_uri.rsplit("/", 1)[-1], text)
        self._file_nodes(LoadedFile(name, text, kind), target_uri, ctype, out, as_uri=target_uri)
        return out

    # -------------------------------------------------------------- internals
    def _dir_nodes(self, d: _Dir, parent: str | None, ctype: ContextType, out: BuiltTree) -> str:
        """Emit nodes for ``d`` and below; return ``d``'s abstract."""
        children: list[ChildSummary] = []
        readme: str | None = None
        own_page: str | None = None
        for name in sorted(d.subdirs):
            sub = d.subdirs[name]
            if sub.kept_abstract is not None:
                out.directories += 1
                children.append(ChildSummary(name, sub.kept_abstract, False))
                continue
            abstract = self._dir_nodes(sub, d.uri, ctype, out)
            children.append(ChildSummary(name, abstract, False))
        for f in d.files:
            fname = f.relpath.rsplit("/", 1)[-1]
            if isinstance(f, KeptFile):
                out.files += 1
                children.append(ChildSummary(fname, f.abstract, True))
                continue
            abstract = self._file_nodes(f, d.uri, ctype, out)
            children.append(ChildSummary(fname, abstract, True))
            if readme is None and is_readme(fname):
                readme, own_page = f.text, fname
        abstract, overview = summarize(
            self.summarizer.summarize_directory, d.name, children, readme
        )
        out.nodes.append(
            finalize(
                Node(
                    uri=d.uri,
                    parent_uri=parent if parent is not None else urimod.parent_of(d.uri),
                    context_type=ctype,
                    level=Level.OVERVIEW,
                    is_leaf=False,
                    abstract=abstract,
                    overview=overview,
                    # Where the overview came from: the directory's own page, or its
                    # children's abstracts (a routing aid; see tree_scoring.is_result_unit).
                    metadata={"name": d.name, OVERVIEW_FROM: own_page or FROM_CHILDREN},
                )
            )
        )
        out.directories += 1
        return abstract

    def _file_nodes(
        self,
        f: LoadedFile,
        parent: str,
        ctype: ContextType,
        out: BuiltTree,
        as_uri: str | None = None,
    ) -> str:
        fname = f.relpath.rsplit("/", 1)[-1]
        file_uri = as_uri or urimod.join(parent, segment(fname))
        abstract, overview = summarize(self.summarizer.summarize_file, fname, f.text, f.kind)
        meta: dict[str, Any] = {"name": fname, "source_path": f.relpath, "kind": f.kind}
        parent_uri = urimod.parent_of(file_uri)
        out.files += 1
        if len(f.text) <= self.leaf_chars:
            out.nodes.append(
                finalize(
                    Node(
                        uri=file_uri,
                        parent_uri=parent_uri,
                        context_type=ctype,
                        level=Level.CONTENT,
                        is_leaf=True,
                        abstract=abstract,
                        overview=overview,
                        # (a converted page's escapes taken back, as its chunks' are)
                        content=_leaf_text(f.text, f.kind),
                        metadata=meta,
                    ),
                    parent_uri,
                )
            )
            return abstract
        chunks = split_text(f.text, f.kind, self.chunk_chars)
        out.nodes.append(
            finalize(
                Node(
                    uri=file_uri,
                    parent_uri=parent_uri,
                    context_type=ctype,
                    level=Level.OVERVIEW,
                    is_leaf=False,
                    abstract=abstract,
                    overview=overview,
                    metadata={**meta, "chunks": len(chunks)},
                )
            )
        )
        for ch in chunks:
            # The heading path leads the content, so the embedded and BM25-indexed text of a
            # chunk says where it sits; ``metadata["chunk_title"]`` keeps it apart (clean).
            text = f"{ch.title}\n\n{ch.text}" if ch.title else ch.text
            sent = first_sentence(ch.text, f.kind, as_read=True)  # shown, not embedded
            chunk_abstract = f"{ch.title}: {sent}" if ch.title and sent else ch.title or sent
            out.nodes.append(
                finalize(
                    Node(
                        uri=f"{file_uri}{urimod.CHUNK_MARK}{ch.index}",
                        parent_uri=file_uri,
                        context_type=ctype,
                        level=Level.CONTENT,
                        is_leaf=True,
                        abstract=_clip_abstract(chunk_abstract or abstract),
                        content=text,
                        chunk_index=ch.index,
                        metadata={
                            **meta,
                            "chunk_title": ch.title,
                            "heading_path": list(ch.path),
                            "passage_start": ch.passage,
                        },
                    )
                )
            )
            out.chunks += 1
        return abstract


LEAF_RULES_DROPPED = True
"""Whether a reST or plain-text page short enough to be one node loses its rule lines: an
unindented line of one punctuation character repeated (``=====``, ``-----``, ``#####``:
:func:`markup.adornment_char`), a title's over- or underline or a drawn separator. Its
chunks never held them (the chunker reads a title's adornment as the heading and a
passage's text has none), but the one node's text did: it is embedded and BM25-indexed,
and 22 one-node files of Debian's lighttpd / docutils / nginx / apache2 documentation
carried them (helper ingest75's count; fixed by helper ingest76). Indented lines (a
literal block's, a table's) are kept. Only true rules go (:func:`_is_rule`): a line such as
``...``, ``--``, ``$$`` or ``))`` is text (helper review77's finding, fixed by helper
ingest77)."""

_RULE_CHARS = frozenset("-=*_#~^+'")
"""The characters a drawn rule or a plain-text title's underline is made of (``'''`` is
AsciiDoc's rule)."""
_DRAWN_LINE = 10
"""A run of any one punctuation character at least this long is a drawn line
(``//////////``, ``..........``)."""


def _is_rule(lines: list[str], i: int, kind: str) -> bool:
    """Whether ``lines[i]`` is a rule line a one-node page's text leaves out: unindented, one
    punctuation character repeated (:func:`markup.adornment_char`), and either three or more
    of ``- = * _ # ~ ^ + '`` (a drawn rule, a title's over- or underline: ``-----``,
    ``=====``, ``#####``), :data:`_DRAWN_LINE` or more of any, or, in reST, what docutils
    reads as no text: four or more of any (a transition) or an over- / underline at least
    as long as the title line beside it.
    Why: the rule dropped every line of one repeated punctuation character, also ``...``,
    ``--``, ``$$``, the text of a one-node plain page (helper review77)."""
    line = lines[i]
    ch = markup.adornment_char(line)
    if ch is None:
        return False
    n = len(line.rstrip())
    if (ch in _RULE_CHARS and n >= 3) or n >= _DRAWN_LINE:
        return True
    if kind != "rst":
        return False
    if n >= 4:
        return True
    for j in (i - 1, i + 1):  # a title's short over- or underline (``..`` under ``A``)
        if 0 <= j < len(lines):
            near = lines[j].rstrip()
            if near.strip() and markup.adornment_char(near) is None and n >= len(near.strip()):
                return True
    return False


def _leaf_text(text: str, kind: str) -> str:
    """A page short enough to be one node, as its chunks would read: a converted page's
    escapes taken back, a reST page without the lines it does not show (docinfo, ``meta`` /
    ``contents`` directives, comments: :func:`markup.rst_unshown_out`), a reST or plain
    text page without its rule lines (:data:`LEAF_RULES_DROPPED`)."""
    if kind == "html":
        return unescape_converted(text).strip()
    if kind == "rst" and markup.RST_UNSHOWN_DROPPED:
        text = "\n".join(markup.rst_unshown_out(text.replace("\r\n", "\n").split("\n")))
    if kind in {"rst", "text"} and LEAF_RULES_DROPPED:
        lines = text.split("\n")
        kept = [ln for i, ln in enumerate(lines) if not _is_rule(lines, i, kind)]
        if len(kept) < len(lines):
            text = "\n".join(kept)
    return text.strip()


def no_files_error(root: Path, report: LoadReport) -> IngestError:
    """The error for a directory where nothing could be read."""
    binary, excluded = len(report.skipped_binary), len(report.excluded)
    why = [f"{binary} binary skipped"] if binary else []
    if report.skipped_large:  # (a .gz file can be small on disk and too large once read)
        why.append(f"{len(report.skipped_large)} over the size limit (max_file_bytes)")
    if excluded:  # (a pattern that matched everything: say so, not "nothing readable")
        why.append(f"{excluded} left out by exclude")
    return IngestError(
        f"no readable text files under {root}" + (f" ({'; '.join(why)})" if why else "")
    )


def summarize(fn: Any, *args: Any) -> tuple[str, str]:
    """A summarizer's ``summarize_file`` / ``summarize_directory``, called and checked.

    Why: the summarizer may be a caller's; its own exception (a ``ValueError``, a
    ``BaseException`` of its own) left ``add_resource`` raw, and an answer that is not two
    strings failed at the unpacking, also raw. Both are :class:`IngestError` now (the message
    names what it raised, cut and redacted: :func:`treehop._plugins.failed`); nothing is
    written (the tree is built before the first write)."""
    out = call("the summarizer", IngestError, fn, *args)
    if (
        not isinstance(out, tuple | list)
        or len(out) != 2
        or not all(isinstance(x, str) for x in out)
    ):
        raise IngestError(
            "the summarizer must answer (abstract, overview), two strings; "
            f"got {type(out).__name__[:100]}"
        )
    tick = ON_SUMMARY.get()  # (a summary made: progress of the write holding the lock)
    if tick is not None:
        tick()
    return out[0], out[1]


def _clip_abstract(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ABSTRACT_CHARS else text[: ABSTRACT_CHARS - 1].rstrip() + "…"


def summarize_ancestor(
    summarizer: Summarizer, uri: str, name: str, children: Sequence[Node]
) -> tuple[str, str]:
    """Re-describe an implicit ancestor (a root or intermediate directory) from its children."""
    return summarize(summarizer.summarize_directory, name, children_summaries(children), None)


def children_summaries(children: Sequence[Node]) -> list[ChildSummary]:
    """What a summariser reads of stored children: each one's name, abstract and kind."""
    return [ChildSummary(c.uri.rsplit("/", 1)[-1], c.abstract, c.is_leaf) for c in children]
