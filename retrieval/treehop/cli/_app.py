"""The ``treehop`` command line: argument parsing, the commands, and error -> exit-code mapping.

Built on :mod:`argparse` rather than typer/click so that the console script needs nothing
beyond the core's own dependencies (pydantic, httpx, numpy) plus the offline embedder; only
``treehop eval`` needs an extra package (``ir-measures``), imported when it runs.

Every command opens the index through a *client factory*. The default builds a
:class:`~treehop.client.Treehop` with the offline MiniLM embedder; tests (and programs embedding
the CLI) pass ``main(argv, client_factory=...)`` to use another embedder or store.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import gc
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from .. import __version__
from .. import _mcp_wire as mcp_wire
from .. import tags as tagmod
from .. import uri as urimod
from ..embedders.base import BaseEmbedder, Vectors
from ..errors import (
    SEARCH_SESSION_HINT,
    EmbeddingError,
    IngestError,
    InvalidConfigError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidTagError,
    InvalidURIError,
    NotFoundError,
    RerankError,
    SessionNotFoundError,
    TreehopError,
)
from ..filters import loads_filter_json
from ..ingest.exclude import check_exclude
from ..ingest.loaders import (
    MAX_FILE_BYTES,
    SKIP_DIRS,
    SKIP_SUFFIXES,
    check_skip_suffixes,
    skipped_for_suffix,
)
from ..models import ContextType, RetrievalMode
from ..redaction import MASK, MODEL_NAME_CHARS, cut_text, redact, shown_name
from ..stores.embedded import EmbeddedStore
from . import _render as render

if TYPE_CHECKING:
    from ..client import AddResult, Treehop
    from ..llm.base import LLM
    from ..rerankers.base import Reranker

DEFAULT_INDEX = ".treehop"
INDEX_ENV = "TREEHOP_INDEX"
_OWN_BEFORE_COMMIT = frozenset({"state", "locks", "LOCK"})
"""What an index directory holds before its first commit (it is still a new index)."""
USER_ENV = "TREEHOP_USER"
DEBUG_ENV = "TREEHOP_DEBUG"
LLM_MODEL_ENV = "TREEHOP_LLM_MODEL"
LLM_BASE_URL_ENV = "TREEHOP_LLM_BASE_URL"
RERANKER_ENV = "TREEHOP_RERANKER"
URI_HINT = (
    "URIs look like viking://resources/<path>, viking://~/memories/<path> or "
    "viking://~/skills/<path>"
)


class ExitCode(IntEnum):
    """Exit status of ``treehop``; scripts can branch on these."""

    OK = 0
    ERROR = 1
    """Anything else treehop reports: a corrupt index, an embedder or store failure."""
    USAGE = 2
    """Bad arguments: unknown option, invalid URI, query, tag, filter or query file."""
    NOT_FOUND = 3
    """No index at ``--index``, or a URI / session id that is not in it."""
    INGEST = 4
    """Nothing could be indexed: missing path, empty directory, only binary/unreadable files."""
    INTERRUPTED = 130


@dataclass(frozen=True)
class ClientOptions:
    """What a client factory needs to open the index a command works on."""

    path: Path
    user: str = "default"
    llm: LLM | None = None
    read_only: bool = False
    """The command only reads (find, ls, ...): the client need not write the index back."""
    reranker: Reranker | None = None
    """What ``--mode thinking`` reranks with (``--reranker`` / ``$TREEHOP_RERANKER``)."""
    embeds: bool = True
    """False: the command never embeds (``ls``, ``tree``, ``read``, ``tag`` without a change,
    ``session list`` / ``show``), so the index opens under the embedder it was built with."""


ClientFactory = Callable[[ClientOptions], "Treehop"]


class _ReadOnlyStore(EmbeddedStore):
    """An embedded store whose ``save()`` does nothing, for commands that only read.

    ``Treehop.close()`` saves the store, and a save writes (and fsyncs) a complete new
    generation of the index. For a ``find`` that costs more than the search itself, and a read
    running while ``treehop index`` works in another process would write back the generation
    it loaded, undoing the other process's work. Session blobs are unaffected: the store writes
    them through at ``put_state``.
    """

    def save(self) -> None:
        return None


class _BuiltWith(BaseEmbedder):
    """Stands in for the model an index was built with, for a command that never embeds.

    Why (helper usage82): an index built from Python with a LangChain / LlamaIndex embedding
    (the README's ``from_documents(chunks, OpenAIEmbeddings(), path=...)``) stores that
    model's name, and the CLI, which can only load treehop's own embedder, was refused on
    every command -- ``treehop ls`` / ``tree`` / ``read`` too, which read stored nodes and
    embed nothing. Named as the index names its model, the client opens it; the vectors are
    untouched (the store is read-only) and an embed, which no browse command makes, is an
    :class:`EmbeddingError` rather than vectors of another space."""

    def __init__(self, name: str, dimension: int | None) -> None:
        self.name = name
        self.dimension = dimension or 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        # (what works is said here too: ``treehop mcp`` serves such an index read-only, and
        # its client sees this as the ``find`` / ``search`` / ``context`` tools' error)
        raise EmbeddingError(
            f"cannot embed a query: the index was built with embedder "
            f"{shown_name(self.name, MODEL_NAME_CHARS)}, which "
            "the CLI and treehop mcp do not load; ls, tree and read work on it as it is "
            "(search it from Python with that model: Treehop(path, embedder=...))"
        )


def default_client_factory(options: ClientOptions) -> Treehop:
    """A :class:`~treehop.client.Treehop` on the embedded store with the default embedder
    (or, for a command that never embeds, under the name of the one the index was built
    with: :class:`_BuiltWith`)."""
    from ..client import Treehop

    store = _ReadOnlyStore(options.path) if options.read_only or not options.embeds else None
    embedder = None
    if store is not None and not options.embeds:
        built_with = store.meta.get("embedder")
        if isinstance(built_with, str) and built_with:
            embedder = _BuiltWith(built_with, store.dimension)
    return Treehop(
        options.path,
        user=options.user,
        llm=options.llm,
        store=store,
        reranker=options.reranker,
        embedder=embedder,
    )


class CliError(Exception):
    """A failure the CLI explains itself (with a hint) instead of a treehop error."""

    def __init__(self, message: str, code: ExitCode, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


@dataclass
class _Ctx:
    args: argparse.Namespace
    factory: ClientFactory
    out: TextIO
    err: TextIO

    @property
    def width(self) -> int:
        return max(60, shutil.get_terminal_size((100, 24)).columns)

    @property
    def index(self) -> Path:
        """``--index`` / ``$TREEHOP_INDEX``, a leading ``~`` expanded as a shell would.

        Why (helper usage82): an MCP client's JSON config (``"--index", "~/.treehop"``), a
        ``.env`` file or a subprocess list hand the path over unexpanded, and ``~/kb`` was a
        folder named ``~`` in the working directory (``treehop mcp`` there served a new,
        empty index). A ``~user`` that names no user is refused, not made a folder."""
        text = str(self.args.index)
        path = os.path.expanduser(text)
        if path.startswith("~"):
            user = text.split("/", 1)[0].split(os.sep, 1)[0]
            raise CliError(
                f"--index {text}: cannot expand {user!r} (no such user's home)",
                ExitCode.USAGE,
                "write the directory out, or ~/... for your own home",
            )
        return Path(path)

    def open(
        self,
        *,
        create: bool = False,
        llm: LLM | None = None,
        read_only: bool = False,
        reranker: Reranker | None = None,
        embeds: bool = True,
    ) -> Treehop:
        """Open the index; a read command on a path without one fails with a how-to.
        ``embeds=False``: the command never embeds (:attr:`ClientOptions.embeds`)."""
        path = self.index
        exists = (path / "CURRENT").is_file()
        if not exists and not create:
            raise CliError(
                f"no treehop index at {path}",
                ExitCode.NOT_FOUND,
                f"create one with: treehop index DIR --index {path}\n"
                f"(or point --index / ${INDEX_ENV} at an existing index)",
            )
        why = _missing(path, "--index ") if not exists and create else None
        if why is not None and not path.exists():
            raise CliError(why, ExitCode.USAGE)
        if not exists and path.exists():
            if not path.is_dir():
                raise CliError(f"--index {path} is a file, not an index directory", ExitCode.USAGE)
            # (what treehop writes before a first commit: the writer's LOCK, the key locks
            # of an append, the sessions' state; a first write that failed left them)
            if any(p.name not in _OWN_BEFORE_COMMIT for p in path.iterdir()):
                raise CliError(
                    f"{path} exists and is not a treehop index",
                    ExitCode.USAGE,
                    "pass --index with a new or empty directory",
                )
        return self.factory(ClientOptions(path, self.args.user, llm, read_only, reranker, embeds))

    def json(self, obj: Any) -> None:
        # (C1 controls and DEL as ``\\u`` escapes: JSON allows them raw, but ``\\x9b`` is a
        # terminal's CSI and a document's text reached the terminal that way; outside a
        # string JSON has only ASCII, so every such character is inside one)
        text = json.dumps(obj, ensure_ascii=False, indent=2)
        print(_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text), file=self.out)


# ---------------------------------------------------------------------------------- helpers
_C1 = re.compile("[\x7f-\x9f]")


def _json_refusal(exc: BaseException) -> str:
    """Why the decoder refused a text that parsed as JSON syntax (short: never the text)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split(";")[0][:120]


def _parse_filter(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        # (a key given twice, nesting past the reader's depth: typed, named; attacks90)
        value = loads_filter_json(text, "--filter")
    except InvalidFilterError:
        raise
    except json.JSONDecodeError as exc:
        raise InvalidFilterError(f"--filter is not valid JSON ({exc.msg} at {exc.pos})") from exc
    except (ValueError, RecursionError) as exc:
        # What the decoder refuses past its syntax: nesting beyond the recursion limit, an
        # integer of more than 4,300 digits. Still the caller's text, still a usage error.
        raise InvalidFilterError(f"--filter is not valid JSON ({_json_refusal(exc)})") from None
    if not isinstance(value, dict):
        raise InvalidFilterError('--filter must be a JSON object, e.g. \'{"op": "must", ...}\'')
    return value


def _make_llm(args: argparse.Namespace) -> LLM | None:
    """The planner / session-summary model from ``--llm-model`` (None: the no-LLM fallbacks)."""
    model = getattr(args, "llm_model", None) or os.environ.get(LLM_MODEL_ENV)
    if not model:
        return None
    from ..llm.openai_compatible import DEFAULT_BASE_URL, OpenAICompatibleLLM

    base = getattr(args, "llm_base_url", None) or os.environ.get(LLM_BASE_URL_ENV)
    return OpenAICompatibleLLM(model, base_url=base or DEFAULT_BASE_URL)


def _make_reranker(args: argparse.Namespace, llm: LLM | None = None) -> Reranker | None:
    """The reranker a ``--reranker`` spec (or ``$TREEHOP_RERANKER``) names; None without one.

    ``llm`` is the chat model of the command, for the ``llm`` spec; ``find`` has no
    ``--llm-model`` of its own, so there the spec builds the model from the environment.
    """
    spec = getattr(args, "reranker", None) or os.environ.get(RERANKER_ENV)
    if not spec:
        return None
    from ..rerankers.spec import reranker_from_spec

    try:
        return reranker_from_spec(spec, llm=llm if llm is not None else _make_llm(args))
    except RerankError as exc:
        raise CliError(str(exc), ExitCode.USAGE, "see treehop find --help for --reranker") from exc


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def _size(n: int) -> str:
    """``5 MB``, ``512 kB``, ``900 bytes`` (decimal units, as the limit is written)."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:g} MB"
    if n >= 1000:
        return f"{n / 1000:g} kB"
    return _plural(n, "byte")


def _listing(names: Sequence[str], shown: int = 5) -> str:
    more = f" +{len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _short_path(path: object, keep: int = 200) -> str:
    """A path for a message: a name the OS refused for its length is not echoed whole."""
    text = str(path)
    return text if len(text) <= keep else f"{text[: keep // 2]}…{text[-keep // 2 :]}"


def _missing(path: Path, what: str = "") -> str | None:
    """Why ``path`` names nothing, where it is not plainly absent (``None``): a symlink loop
    in it (``Path.exists`` answers False for ``ELOOP``, so it read "no such file or
    directory"; ``Path.resolve`` raised a raw ``RuntimeError``), or a link to a missing
    path."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{what}{_short_path(path)}: too many levels of symbolic links (a symlink loop)"
        if path.is_symlink():
            return (
                f"{what}{_short_path(path)}: no such file or directory (a link to a missing path)"
            )
    return None


def _index_inside(index: Path, src: Path) -> bool:
    """True when the index would be walked (and so indexed) as part of ``src``."""
    try:
        rel = index.resolve().relative_to(src.resolve())
    except ValueError:
        return False
    return not any(p in SKIP_DIRS or p.startswith(".") for p in rel.parts)


# ---------------------------------------------------------------------------------- commands
def cmd_index(ctx: _Ctx) -> int:
    a = ctx.args
    src = Path(a.dir)
    try:
        exists = src.exists()
    except OSError as exc:  # ENAMETOOLONG and kin are raised, not answered False
        raise CliError(
            f"cannot read {_short_path(src)}: {exc.strerror or type(exc).__name__}",
            ExitCode.INGEST,
        ) from None
    if not exists:
        why = _missing(src) or f"no such file or directory: {_short_path(src)}"
        raise CliError(why, ExitCode.INGEST)
    bad_index = None if ctx.index.exists() else _missing(ctx.index, "--index ")
    if bad_index is not None:
        raise CliError(bad_index, ExitCode.USAGE)
    if src.is_dir() and ctx.index.resolve() == src.resolve():
        raise CliError(
            f"--index {ctx.index} is the directory being indexed",
            ExitCode.USAGE,
            f"use a hidden name such as {src / DEFAULT_INDEX} or a path outside {src}",
        )
    if src.is_dir() and _index_inside(ctx.index, src):
        raise CliError(
            f"the index {ctx.index} is inside {src} and would index itself",
            ExitCode.USAGE,
            f"use a hidden name such as {src / DEFAULT_INDEX} or a path outside {src}",
        )
    user_tags = tagmod.user_tags(a.tag or None, "--tag")
    skip = _skip_suffixes(a.skip_suffixes)
    exclude = _exclude(a.exclude)
    progress = render.Progress(ctx.err, mode=a.progress)
    progress.note(f"reading and summarising {src} …")
    fresh = not ctx.index.exists()
    try:
        with ctx.open(create=True) as client:
            if a.max_file_bytes is not None:
                client.aio.writer.builder.max_file_bytes = a.max_file_bytes
            if skip is not None:
                client.aio.writer.builder.skip_suffixes = skip
            res: AddResult = client.add_resource(
                src,
                target_uri=a.target_uri,
                tags=user_tags or None,
                progress=progress,
                exclude=exclude,
            )
            total = len(client.store)
            root = client.aio.display(res.root_uri)
    except Exception:
        # A first run that failed before anything was committed would leave an index
        # directory without an index behind, and the next read command would report "no
        # results" instead of "no index": only then, and only a directory this command
        # created, is removed. An interrupt (Ctrl-C) never removes anything: the batches an
        # ingest committed stay, and the next run resumes after them.
        if fresh and ctx.index.is_dir() and not (ctx.index / "CURRENT").is_file():
            shutil.rmtree(ctx.index, ignore_errors=True)
        raise
    finally:
        progress.finish()
    if a.json:
        ctx.json(
            {
                **dataclasses.asdict(res),
                "root_uri": root,
                "index": str(ctx.index),
                "index_nodes": total,
            }
        )
        return ExitCode.OK
    o = ctx.out
    print(f"indexed {src} -> {root} in {res.elapsed_s:.1f}s", file=o)
    print(
        f"  {_plural(res.directories, 'directory', 'directories')}, "
        f"{_plural(res.files, 'file')}, {_plural(res.chunks, 'chunk')} "
        f"({res.embedded} embedded, {res.unchanged} unchanged, {res.deleted} removed)",
        file=o,
    )
    large = set(res.skipped_large)
    cap = res.max_file_bytes
    skip = SKIP_SUFFIXES if skip is None else skip
    assets = [n for n in res.skipped_other if n not in large and skipped_for_suffix(n, skip)]
    shown_assets = set(assets)
    skipped = [
        ("binary file", "binary files", res.skipped_binary),
        ("unreadable file", "unreadable files", res.skipped_unreadable),
        (
            f"file over {_size(cap)} (max_file_bytes={cap}; raise it with --max-file-bytes)",
            f"files over {_size(cap)} (max_file_bytes={cap}; raise it with --max-file-bytes)",
            res.skipped_large,
        ),
        (
            "page asset (a style sheet, script or Sphinx source copy; --skip-suffixes)",
            "page assets (style sheets, scripts, Sphinx source copies; --skip-suffixes)",
            assets,
        ),
        (
            # (a Latin-1 folder's names too: they were dropped without a word, helper attacks80)
            "file or folder whose name no URI can hold (not UTF-8, a control character or an "
            "escaped slash; rename it)",
            "files or folders whose names no URI can hold (not UTF-8, control characters or "
            "escaped slashes; rename them)",
            res.skipped_names,
        ),
        (
            "file or folder matched by --exclude",
            "files or folders matched by --exclude",
            res.excluded,
        ),
        (
            "other file (empty, a link or a .gz copy of a file beside it)",
            "other files (empty, links or .gz copies of files beside them)",
            [n for n in res.skipped_other if n not in large and n not in shown_assets],
        ),
    ]
    for one, many, names in skipped:
        if names:
            print(f"  skipped {_plural(len(names), one, many)}: {_listing(names)}", file=o)
    if res.read_as_cp1252:
        # (not skipped, but a guess: a file in another legacy encoding reads wrongly)
        print(
            f"  read {_plural(len(res.read_as_cp1252), 'file')} as Windows-1252 "
            f"(neither UTF-8 nor UTF-16; check them): {_listing(res.read_as_cp1252)}",
            file=o,
        )
    print(f"index {ctx.index} holds {_plural(total, 'node')}", file=o)
    print(f'try: treehop find "your question" --index {ctx.index}', file=o)
    return ExitCode.OK


def _search_kwargs(a: argparse.Namespace) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "target_uri": a.target_uri or None,
        "limit": a.limit,
        "filter": _parse_filter(a.filter),
        "tags": a.tag or None,
        "tags_all": a.tag_all or None,
        "score_threshold": a.threshold,
        "include_directories": False if a.files_only else None,
        "explain": a.explain,
        "dense_weight": a.dense_weight,
    }
    if a.mode is not None:
        kw["mode"] = a.mode
    return kw


def _check_filters(client: Treehop, kw: dict[str, Any]) -> None:
    """A ``--tag`` / ``--tag-all`` label or a ``--filter`` field that no stored node has is a
    typo (or was never indexed): an ``InvalidFilterError`` naming what the index holds (exit
    status 2), as the LangChain and LlamaIndex integrations report it, not "no results"."""
    from ..ingest.records import check_filter_fields

    check_filter_fields(client, kw.get("filter"), tags=(kw.get("tags"), kw.get("tags_all")))


def cmd_find(ctx: _Ctx) -> int:
    a = ctx.args
    kw = _search_kwargs(a)
    reranker = _make_reranker(a)
    if reranker is not None and a.mode is None:
        kw["mode"] = RetrievalMode.THINKING  # naming a reranker means: rerank
    with ctx.open(read_only=True, reranker=reranker) as client:
        _check_filters(client, kw)
        res = client.find(a.query, context_type=a.type, **kw)
        display = client.aio.display
    if a.json:
        ctx.json(res.model_dump(mode="json"))
        return ExitCode.OK
    render.render_results(
        ctx.out, a.query, res, display, ctx.width, text_chars=a.text_chars if a.text else 0
    )
    if a.explain:
        for qr in res.query_results or []:
            render.render_explain(ctx.out, qr, display)
    return ExitCode.OK


def cmd_search(ctx: _Ctx) -> int:
    a = ctx.args
    kw = _search_kwargs(a)
    if a.type:
        kw["context_types"] = [a.type]
    llm = _make_llm(a)
    with ctx.open(llm=llm, read_only=True, reranker=_make_reranker(a, llm)) as client:
        _check_filters(client, kw)
        res = client.search(a.query, session_id=a.session, **kw)
        display = client.aio.display
    if a.json:
        # (``score_kind`` first: a reader of the JSON learns what ``score`` is, as the
        # table's ``fused`` column says it; ``find``'s JSON has none, its scores are cosines)
        ctx.json({"score_kind": render.SCORE_KIND_FUSED, **res.model_dump(mode="json")})
        return ExitCode.OK
    if res.query_plan is not None:
        render.render_plan(ctx.out, res.query_plan)
    render.render_results(
        ctx.out,
        a.query,
        res,
        display,
        ctx.width,
        text_chars=a.text_chars if a.text else 0,
        fused=True,
    )
    if a.explain:
        for i, qr in enumerate(res.query_results or [], 1):
            render.render_explain(ctx.out, qr, display, f" (q{i})")
    return ExitCode.OK


TEXT_CHARS = 1000
"""``find --text``'s default length of a hit's passage. Why a flag at all: the table shows a
hit's abstract, which for a chunk is its heading path and first sentence, cut to the
terminal: over a Debian manual the best hit for "how do I orphan a package" read "5. Managing
Packages > 5.9. Moving, removing, ..." and ``treehop read`` of it gave the section's last line
alone (the face chunk), where the retrievers return the whole passage."""

ROLES = ("user", "assistant", "system")
"""The roles ``session add`` takes (as a first word or ``--role``)."""


def _role_and_text(words: Sequence[str], flag: str | None) -> tuple[str, str]:
    """``session add``'s words after the ID as ``(role, text)``: ``TEXT`` alone (the role
    from ``--role``, else user), or ``ROLE TEXT`` when the first of exactly two words is a
    role. Why: ``treehop session add ID user "text"`` was argparse's bare "unrecognized
    arguments: text". A text that is a role word alone stays a text (``session add ID
    user``), and two roles that differ are refused; any other words are refused, never
    guessed: an unquoted ``user wants a deploy`` is not the role user and a text."""
    if len(words) == 1:
        return flag or "user", words[0]
    hint = (
        'quote a text of several words: treehop session add ID "the text"\n'
        f"a role ({', '.join(ROLES)}) comes before the text or as --role: "
        'treehop session add ID assistant "Use OAuth." (or --role user)'
    )
    if len(words) == 2 and words[0] in ROLES:
        if flag is not None and flag != words[0]:
            raise CliError(
                f"the role is given twice: {words[0]} and --role {flag}", ExitCode.USAGE, hint
            )
        return words[0], words[1]
    if len(words) == 2:
        raise CliError(
            f"session add: {words[0]!r:.80} is not a role; it takes ID [ROLE] TEXT",
            ExitCode.USAGE,
            hint,
        )
    raise CliError(
        f"session add takes ID [ROLE] TEXT, got {len(words)} words after the ID: quote the text",
        ExitCode.USAGE,
        hint,
    )


def cmd_session(ctx: _Ctx) -> int:
    a = ctx.args
    writes = a.session_cmd in ("new", "add")
    role = text = ""
    if a.session_cmd == "add":  # (checked before the index is opened)
        role, text = _role_and_text(a.words, a.role)
    with ctx.open(llm=_make_llm(a), read_only=not writes, embeds=writes) as client:
        if a.session_cmd == "new":
            sid = client.create_session()
            if a.json:
                ctx.json({"session_id": sid})
            else:
                print(sid, file=ctx.out)
            return ExitCode.OK
        if a.session_cmd == "list":
            sessions = client.aio.sessions.list_sessions(user=client.user)
            if a.json:
                ctx.json([s.model_dump(mode="json") for s in sessions])
                return ExitCode.OK
            rows = [
                [s.session_id, str(s.message_count), render.one_line(s.summary)] for s in sessions
            ]
            cols = [render.Column("session"), render.Column("messages", ">")]
            cols.append(render.Column("summary", flex=True))
            for line in render.table(cols, rows, ctx.width):
                print(line, file=ctx.out)
            return ExitCode.OK
        if a.session_cmd == "add":
            client.add_message(a.session_id, role, text)
        session = client.get_session(a.session_id)
    if a.json:
        ctx.json(session.model_dump(mode="json"))
        return ExitCode.OK
    o = ctx.out
    if a.session_cmd == "add":
        print(
            f"added a {role} message to session {session.session_id} "
            f"({_plural(session.message_count, 'message')})",
            file=o,
        )
        return ExitCode.OK
    print(f"session {session.session_id} ({_plural(session.message_count, 'message')})", file=o)
    if session.summary:
        print(f"summary ({session.summary_method}): {session.summary}", file=o)
    for m in session.messages:
        print(f"  [{m.seq}] {m.role}: {render.one_line(m.content)}", file=o)
    return ExitCode.OK


def cmd_ls(ctx: _Ctx) -> int:
    a = ctx.args
    with ctx.open(read_only=True, embeds=False) as client:
        try:
            entries = client.ls(a.uri)
        except NotFoundError:
            if urimod.shown_root(a.uri, client.user) is None:
                raise
            entries = []  # a root with nothing under it yet: "... is empty"
    if a.json:
        ctx.json([dataclasses.asdict(e) for e in entries])
        return ExitCode.OK
    cols = [
        render.Column("kind"),
        render.Column("children", ">"),
        render.Column("uri"),
        render.Column("tags"),
        render.Column("abstract", flex=True),
    ]
    rows = [
        [
            render.kind_of(e.uri, e.is_leaf, e.kind),
            (_plural(e.children, "chunk") if e.kind == "file" else str(e.children))
            if not e.is_leaf
            else "",
            e.uri,
            _listing([tagmod.label_of(t) for t in e.tags], 3),
            e.abstract,
        ]
        for e in entries
    ]
    if not rows:
        print(f"{a.uri} is empty", file=ctx.out)
        return ExitCode.OK
    for line in render.table(cols, rows, ctx.width):
        print(line, file=ctx.out)
    return ExitCode.OK


def cmd_tree(ctx: _Ctx) -> int:
    a = ctx.args
    if a.depth < 0:
        raise InvalidQueryError(f"--depth must be >= 0, got {a.depth}")
    with ctx.open(read_only=True, embeds=False) as client:
        try:
            tree = client.tree(a.uri, a.depth)
        except NotFoundError:
            root = urimod.shown_root(a.uri, client.user)
            if root is None:
                raise
            tree = {"uri": root, "is_leaf": False, "abstract": "", "kind": "directory"}
            if a.depth > 0:
                tree["children"] = []  # a root with nothing under it yet
    if a.json:
        ctx.json(tree)
        return ExitCode.OK
    render.render_tree(ctx.out, tree, ctx.width, show_abstract=not a.no_abstract)
    if render.is_document(tree):
        # (the one line above is all of it; "0 directories, 0 leaves" read as an empty tree.
        # The hint is the one ls gives a leaf; a chunked file's lines are its chunks.)
        chunks = tree.get("chunks")
        what = (
            "a leaf"
            if tree.get("is_leaf")
            else f"a file of {_plural(chunks, 'chunk') if isinstance(chunks, int) else '? chunks'}"
        )
        print(
            f"{what}: print it with: treehop read {render.printable(str(tree['uri']))}",
            file=ctx.out,
        )
        return ExitCode.OK
    dirs, leaves = render.count_tree(tree)
    print(
        f"{_plural(dirs, 'directory', 'directories')}, "
        f"{_plural(leaves, 'leaf', 'leaves')} (depth {a.depth})",
        file=ctx.out,
    )
    return ExitCode.OK


def cmd_read(ctx: _Ctx) -> int:
    from ..client import node_kind  # (loaded with the client ctx.open made)

    a = ctx.args
    with ctx.open(read_only=True, embeds=False) as client:
        node = client.stat(a.uri)
        text = client.read(a.uri)
    # (a file of one chunk, as a vector store stores each document, reads the same as its
    # overview; comparing the two called it a directory)
    if node_kind(node) == "directory":
        print(f"({a.uri} is a directory: showing its overview)", file=ctx.err)
    # On a terminal a document's control characters are shown, not obeyed; a pipe gets the
    # stored text exactly.
    isatty = getattr(ctx.out, "isatty", None)
    print(render.printable(text) if callable(isatty) and isatty() else text, file=ctx.out)
    return ExitCode.OK


def cmd_rm(ctx: _Ctx) -> int:
    a = ctx.args
    with ctx.open() as client:
        aio = client.aio
        node = client.stat(a.uri)
        if node.parent_uri is None:
            raise CliError(
                f"{a.uri} is a root of the tree; remove what is below it one by one",
                ExitCode.USAGE,
                f"or delete the whole index: rm -r {ctx.index}",
            )
        shown = aio.display(node.uri)
        n = client.remove(a.uri)
    if a.json:
        ctx.json({"uri": shown, "removed": n})
        return ExitCode.OK
    print(f"removed {shown} ({_plural(n, 'node')})", file=ctx.out)
    return ExitCode.OK


def _print_tags(o: TextIO, uri: str, tags: Sequence[str]) -> None:
    """The tags of ``uri`` by source; through :func:`render.printable`, as every other cell
    is: a stored label holding a C1 control (a CSI) was printed to the terminal as it was."""
    print(f"{render.printable(uri)}: {_plural(len(tags), 'tag')}", file=o)
    for source in tagmod.SOURCES:
        labels = [tagmod.label_of(t) for t in tags if tagmod.source_of(t) == source]
        if labels:
            print(f"  {source:<8} {render.printable(', '.join(labels))}", file=o)


def cmd_tag(ctx: _Ctx) -> int:
    a = ctx.args
    changes = bool(a.add or a.remove)
    with ctx.open(read_only=not changes, embeds=changes) as client:
        if a.add or a.remove:
            client.set_tags(a.uri, add=a.add or None, remove=a.remove or None)
        node = client.stat(a.uri)
        shown = client.aio.display(node.uri)
    if a.json:
        ctx.json({"uri": shown, "tags": node.tags})
        return ExitCode.OK
    _print_tags(ctx.out, shown, node.tags)
    return ExitCode.OK


def cmd_retag(ctx: _Ctx) -> int:
    a = ctx.args
    with ctx.open() as client:
        n = client.retag(a.uri)
    if a.json:
        ctx.json({"uri": a.uri, "retagged": n})
        return ExitCode.OK
    where = a.uri or "the whole index"
    print(f"re-tagged {_plural(n, 'node')} in {where} (vectors unchanged)", file=ctx.out)
    return ExitCode.OK


def cmd_eval(ctx: _Ctx) -> int:
    from . import _eval

    a = ctx.args
    k = a.k
    if not 1 <= k <= 1000:
        raise InvalidQueryError(f"--k must be between 1 and 1000, got {k}")
    progress = render.Progress(ctx.err)
    reranker = _make_reranker(a)
    with ctx.open(read_only=True, reranker=reranker) as client:
        aio = client.aio

        def norm(uri: str) -> str:
            return aio.display(aio.resolve(uri))

        queries = _eval.load_queries(Path(a.file), norm)
        _check_filters(client, {"tags": a.tag or None})
        unknown: dict[str, list[str]] = {}
        for q in queries:
            nodes = client.store.get([aio.resolve(u) for u in q.relevant])
            missing = [u for u, n in zip(q.relevant, nodes, strict=True) if n is None]
            if missing:
                unknown[q.qid] = missing
        rankings: list[list[str]] = []
        for i, q in enumerate(queries, 1):
            res = client.find(
                q.query,
                target_uri=a.target_uri or None,
                context_type=a.type,
                limit=k,
                mode=a.mode or (RetrievalMode.THINKING if reranker else RetrievalMode.QUICK),
                tags=a.tag or None,
                include_directories=False if a.files_only else None,
            )
            rankings.append([m.uri for m in res.contexts()])
            progress("eval", i, len(queries))
    report = _eval.evaluate(queries, rankings, k, files_only=a.files_only)
    report.unknown_relevant = unknown
    for qid, uris in unknown.items():
        print(redact(f"warning: query {qid}: not in the index: {_listing(uris, 3)}"), file=ctx.err)
    if a.json:
        ctx.json(report.as_json())
        return ExitCode.OK
    o = ctx.out
    ndcg, rec, rr = _eval.metric_names(k)
    print(f"eval: {_plural(len(queries), 'query', 'queries')} from {a.file}, k={k}", file=o)
    # (the names of --json's "metrics" keys and of the --per-query columns: one reading; the
    # mean of RR@k is what other tools call MRR@k; helper leftovers73a: it was printed so)
    w = max(len(name) for name in (ndcg, rec, rr))
    for name in (ndcg, rec, rr):
        print(f"  {name:<{w}}  {report.metrics[name]:.4f}", file=o)
    if a.per_query:
        cols = [
            render.Column("id"),
            render.Column(ndcg, ">"),
            render.Column(rec, ">"),
            render.Column(rr, ">"),
            render.Column("hits", ">"),
            render.Column("query", flex=True),
        ]
        rows = [
            [
                str(p["id"]),
                f"{p[ndcg]:.3f}",
                f"{p[rec]:.3f}",
                f"{p[rr]:.3f}",
                str(p["retrieved"]),
                str(p["query"]),
            ]
            for p in report.per_query
        ]
        for line in render.table(cols, rows, ctx.width):
            print(line, file=o)
    return ExitCode.OK


# ---------------------------------------------------------------------------------- parser
def cmd_mcp(ctx: _Ctx) -> int:
    """Serve find/search/context/ls/read/tree/add_memory over stdio until the client leaves.

    stdout belongs to the protocol: nothing else may be printed while the server runs.
    """
    try:
        from ..mcp_server import build_server
    except ImportError as exc:  # pragma: no cover - depends on installed extras
        raise CliError(
            "treehop mcp needs the MCP SDK",
            ExitCode.ERROR,
            "pip install -e '.[mcp]' in a treehop clone",
        ) from exc
    limits = _mcp_limits(ctx.args)  # (checked before the index is opened or created)
    new = not (ctx.index / "CURRENT").is_file()
    read_only = bool(ctx.args.read_only)
    try:
        client = ctx.open(create=not read_only, read_only=read_only)
    except EmbeddingError as exc:
        # An index built from Python with another model (a LangChain / LlamaIndex store
        # over OpenAIEmbeddings()): refused at start, the agent had no tool at all. Served
        # read-only under the model it names, as the CLI's ls / tree / read open it: the
        # browse tools work, find / search / context answer _BuiltWith's EmbeddingError.
        if not str(exc).endswith("would mix vector spaces"):
            raise
        client = ctx.open(read_only=True, embeds=False)
        read_only = True
        print(
            f"treehop mcp: {exc}: serving it read-only; ls, tree and read work, find, "
            "search and context answer an EmbeddingError (add_memory is left out)",
            file=ctx.err,
        )
    if new:
        # A typo in a client's configured --index would otherwise serve an empty index in
        # silence: every search "finds nothing". The client's server log shows stderr.
        print(
            f"treehop mcp: no index at {ctx.index} yet: serving an empty one (add_memory "
            f"creates it; add documents with: treehop index DIR --index {ctx.index})",
            file=ctx.err,
        )
    try:
        build_server(client.aio, read_only=read_only, **limits._asdict()).run("stdio")
    finally:
        client.close()
    return ExitCode.OK


MCP_LIMIT_OPTIONS = {
    "line_chars": "--max-line-chars",
    "write_deadline_s": "--write-deadline",
    "max_in_flight": "--max-in-flight",
    "max_in_flight_chars": "--max-in-flight-chars",
}
"""``treehop mcp``'s option for each of ``build_server``'s wire limits."""


def _mcp_limits(args: argparse.Namespace) -> mcp_wire.WireLimits:
    """The server's limits from ``treehop mcp``'s options (those not given: the defaults),
    checked together (:func:`treehop._mcp_wire.wire_limits`, one check for the CLI and the
    Python API); a bad one is a usage error naming its option."""
    given = {key: getattr(args, key) for key in MCP_LIMIT_OPTIONS}
    try:
        return mcp_wire.wire_limits(
            **{key: value for key, value in given.items() if value is not None},
            names=MCP_LIMIT_OPTIONS,
        )
    except InvalidConfigError as exc:
        raise CliError(
            str(exc), ExitCode.USAGE, "treehop mcp --help gives each limit's default and range"
        ) from None


def _skip_suffixes(value: str | None) -> frozenset[str] | None:
    """``--skip-suffixes``' comma-separated list checked before the index is opened (None:
    the default list); a bad suffix is a usage error naming it."""
    if value is None:
        return None
    parts = [p.strip() for p in value.split(",") if p.strip()]
    try:
        return check_skip_suffixes(parts)
    except InvalidQueryError as e:
        raise CliError(
            f"--skip-suffixes: {e}".replace("skip_suffixes: ", ""),
            ExitCode.USAGE,
            "give suffixes such as --skip-suffixes .css,.js (or '' to read every file)",
        ) from None


def _exclude(value: list[str] | None) -> list[str] | None:
    """``--exclude``'s patterns (repeatable) checked before the index is opened, so a bad one
    is a usage error naming it and nothing is created."""
    if not value:
        return None
    try:
        check_exclude(value)
    except InvalidQueryError as e:
        raise CliError(
            f"--{e}",
            ExitCode.USAGE,
            "give glob patterns relative to the folder, such as --exclude "
            "developers-reference.html --exclude '_static/'",
        ) from None
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        # (the value cut and escaped as an unknown argument is: 100,000 digits were echoed
        # whole, helper attacks76)
        raise argparse.ArgumentTypeError(f"not an integer: {_shown_arg(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _integer(text: str) -> int:
    """An option's integer, its range checked where it is used."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {_shown_arg(text)}") from None


def _number(text: str) -> float:
    """An option's number (``nan`` / ``inf`` read as such: its range check refuses them)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {_shown_arg(text)}") from None


def _checked_float(check: str, rule: str) -> Callable[[str], float]:
    """An option's float, checked by the core's ``treehop.validation.<check>`` but refused in
    the option's own words: argparse prefixes ``argument --threshold:``, where the core's
    error named the Python keyword (``score_threshold out of range: nan``)."""

    def parse(text: str) -> float:
        from .. import validation  # (imported when the option is given, not at start-up)

        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {_shown_arg(text)}") from None
        try:
            checked: float = getattr(validation, check)(value)
        except InvalidQueryError:
            # (``float`` reads 100,000 digits as inf: the text was echoed whole, unescaped)
            raise argparse.ArgumentTypeError(f"{rule}, got {_shown_arg(text)}") from None
        return checked

    return parse


def _common() -> _Parser:
    """``--index``/``--user`` accepted after the subcommand too (SUPPRESS keeps the top-level
    default unless the option is given here)."""
    p = _Parser(add_help=False)
    p.add_argument("--index", metavar="PATH", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    p.add_argument("--user", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return p


def _search_options(p: argparse.ArgumentParser, *, default_mode: str) -> None:
    p.add_argument("query", help="what to look for")
    p.add_argument(
        "--target-uri",
        action="append",
        metavar="URI",
        help="search only under this URI (repeatable)",
    )
    p.add_argument("--type", choices=[c.value for c in ContextType], help="one context type only")
    p.add_argument("--limit", type=int, default=10, help="how many hits (default 10)")
    p.add_argument(
        "--tag", action="extend", nargs="+", metavar="TAG", help="keep hits with any of the tags"
    )
    p.add_argument(
        "--tag-all",
        action="extend",
        nargs="+",
        metavar="TAG",
        help="keep hits carrying all of the tags",
    )
    p.add_argument("--filter", metavar="JSON", help="metadata filter (the filter DSL, as JSON)")
    p.add_argument(
        "--mode",
        choices=[m.value for m in RetrievalMode],
        help=f"thinking reranks when a reranker is configured (default {default_mode})",
    )
    p.add_argument(
        "--threshold",
        type=_checked_float("check_threshold", "must be a finite number between -1e9 and 1e9"),
        help="drop hits scoring below this",
    )
    p.add_argument(
        "--dense-weight",
        type=_checked_float("check_dense_weight", "must be a number in [0.2, 1]"),
        metavar="W",
        help="hybrid weight in [0.2, 1]: 1 = dense only, lower mixes in BM25 (default 0.5)",
    )
    p.add_argument("--files-only", action="store_true", help="leave directories out of the hits")
    p.add_argument(
        "--text",
        action="store_true",
        help="print each hit's passage under the table (the text a LangChain / LlamaIndex "
        "retriever or the MCP server returns for it)",
    )
    p.add_argument(
        "--text-chars",
        type=_positive_int,
        default=TEXT_CHARS,
        metavar="N",
        help=f"with --text: at most N characters a hit (default {TEXT_CHARS})",
    )
    p.add_argument(
        "--explain", action="store_true", help="print the search path (rounds, why it stopped)"
    )
    p.add_argument("--json", action="store_true", help="the full result as JSON")
    _reranker_option(p)


def _reranker_option(p: argparse.ArgumentParser) -> None:
    from ..rerankers.spec import SPEC_FORMS

    p.add_argument(
        "--reranker",
        metavar="SPEC",
        help=f"what --mode thinking reranks with (${RERANKER_ENV}): {SPEC_FORMS}",
    )


def _llm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--llm-model",
        metavar="MODEL",
        help=f"chat model for intent analysis and session summaries (${LLM_MODEL_ENV}); "
        "without one, search falls back to the raw query",
    )
    p.add_argument(
        "--llm-base-url",
        metavar="URL",
        help=f"OpenAI-compatible endpoint (${LLM_BASE_URL_ENV}); the key is read from "
        "$TREEHOP_LLM_API_KEY or $OPENAI_API_KEY",
    )


EPILOG = """\
exit codes: 0 ok, 1 error (corrupt index, embedder/store failure), 2 bad arguments (invalid URI,
query, tag, filter, query file), 3 not found (no index at --index, unknown URI or session),
4 nothing to index (missing path, empty directory, only binary/unreadable files), 130 interrupted.
Set TREEHOP_DEBUG=1 to see tracebacks.
"""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors redacted (:func:`redact`) before they are printed.

    Why (helper attacks84): argparse quotes the word it could not read
    (``invalid choice: '...'``, ``invalid int value: '...'``), and
    ``treehop —api-key=sk-... find q`` (an option pasted with a page's em dash, before the
    command) was read as the command's name: the key printed whole to the terminal and any
    log of it. The CLI's own errors mask a credential-named option's value; this masks what
    argparse itself says, whatever word it quotes. (The subcommands' parsers are made by
    ``add_subparsers`` with the class of the parser that adds them.)"""

    def error(self, message: str) -> NoReturn:
        said = redact(_QUOTED_WORD.sub(_masked_word, message))
        super().error(said + _command_hint(self, message))


OTHER_TOOLS_COMMANDS: dict[str, str] = {
    **dict.fromkeys(("serve", "serve-mcp", "mcp-server", "server", "stdio"), "mcp"),
    **dict.fromkeys(("query", "ask", "retrieve", "lookup", "grep"), "find"),
    **dict.fromkeys(("ingest", "add", "load", "build", "import", "upsert"), "index"),
    **dict.fromkeys(("cat", "get", "open"), "read"),
    **dict.fromkeys(("list", "dir"), "ls"),
    **dict.fromkeys(("delete", "remove", "del"), "rm"),
    **dict.fromkeys(("evaluate", "bench", "benchmark", "score"), "eval"),
    "tags": "tag",
}
"""Command names other retrieval tools and MCP servers use, and the ``treehop`` command that
does that (helper usage84: ``treehop serve-mcp --help`` answered argparse's bare "invalid
choice" with thirteen names to read through)."""

_INVALID_CHOICE = re.compile(r"^argument (?:COMMAND|ACTION): invalid choice: '(.*)' \(choose from")


def _command_hint(parser: argparse.ArgumentParser, message: str) -> str:
    """``"; did you mean 'mcp'?"`` for argparse's "invalid choice" of a (sub)command name
    another tool uses (:data:`OTHER_TOOLS_COMMANDS`) or a misspelling of one
    (:data:`NAMED_ALIKE`); ``""`` otherwise. Only a command's own name is ever printed."""
    import difflib

    m = _INVALID_CHOICE.match(message)
    choose = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if m is None or choose is None:
        return ""
    typed, names = m.group(1).lower(), list(choose.choices)
    meant = OTHER_TOOLS_COMMANDS.get(typed)
    if meant not in names:
        close = difflib.get_close_matches(typed, names, n=1, cutoff=NAMED_ALIKE)
        meant = close[0] if close else None
    return f"; did you mean '{meant}'?" if meant else ""


_QUOTED_WORD = re.compile(r"[^\s'\"]+")
"""A word of an argparse message (a quoted argument is one: argparse quotes with ``'``)."""


def _masked_word(m: re.Match[str]) -> str:
    """``m``'s word with its value masked where it is a credential-named option's
    ``name=value`` (:func:`_secret_option`: any dashes, the CLI's list of names, wider than
    :func:`redact`'s: ``—hf_auth=...``)."""
    word = m.group()
    name, eq, _ = word.partition("=")
    return f"{name}={MASK}" if eq and _secret_option(word) else word


def build_parser() -> argparse.ArgumentParser:
    """The full parser (exposed for documentation and tests)."""
    parser = _Parser(
        prog="treehop",
        description="Index a folder into a tree and search it: find, search, browse, evaluate.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"treehop {__version__}")
    parser.add_argument(
        "--index",
        metavar="PATH",
        default=os.environ.get(INDEX_ENV) or DEFAULT_INDEX,
        help=f"the index directory (default: ${INDEX_ENV} or ./{DEFAULT_INDEX})",
    )
    parser.add_argument(
        "--user",
        default=os.environ.get(USER_ENV) or "default",
        help=f"whose memories/skills viking://~ means (default: ${USER_ENV} or 'default')",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = [_common()]

    def add(name: str, help_: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_, description=help_, parents=common)

    p = add("index", "index a directory or file (re-indexing re-embeds only what changed)")
    p.add_argument("dir", metavar="DIR", help="directory or file to index")
    p.add_argument(
        "--target-uri",
        metavar="URI",
        help="where in the tree (default viking://resources/<name of DIR>)",
    )
    p.add_argument(
        "--tag", action="extend", nargs="+", metavar="TAG", help="user tags for every node"
    )
    p.add_argument(
        "--max-file-bytes",
        type=_positive_int,
        metavar="N",
        help=f"skip files larger than this (default {MAX_FILE_BYTES}: 5 MB)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        metavar="PATTERN",
        help="leave out the files and folders this glob matches, on their path relative to "
        "the folder (repeatable): a name alone matches at any depth (developers-reference.html, "
        "'*.pdf'), one with a / from the top ('api/*.html', '**/_build/**'), a trailing / "
        "folders only; * never crosses /; case is ignored. A file given by itself is always read",
    )
    p.add_argument(
        "--skip-suffixes",
        metavar="LIST",
        help="comma-separated suffixes a folder's walk passes over (default "
        f"{','.join(sorted(SKIP_SUFFIXES))}; .js/.mjs only beside HTML pages); '' reads "
        "every text file",
    )
    p.add_argument(
        "--progress",
        choices=render.PROGRESS_MODES,
        default="auto",
        help="bar: one redrawn line; plain: a line every 10 s (files, nodes, nodes/s, ETA), "
        "for logs; none; auto (default): bar on a terminal, plain otherwise",
    )
    p.add_argument("--json", action="store_true", help="the counts as JSON")
    p.set_defaults(func=cmd_index)

    p = add("find", "one query, no LLM: the hierarchical search")
    _search_options(p, default_mode="quick")
    p.set_defaults(func=cmd_find)

    p = add("search", "session-aware search: intent analysis, typed queries, fusion")
    _search_options(p, default_mode="thinking")
    p.add_argument("--session", metavar="ID", help="session whose context the planner sees")
    _llm_options(p)
    p.set_defaults(func=cmd_search)

    p = add("session", "create, extend and show conversation sessions (for search --session)")
    ssub = p.add_subparsers(dest="session_cmd", metavar="ACTION", required=True)
    sp = ssub.add_parser("new", help="start a session and print its id", parents=common)
    sp.add_argument("--json", action="store_true")
    sp = ssub.add_parser(
        "add",
        help="append a message to a session",
        parents=common,
        usage="%(prog)s [options] ID [ROLE] TEXT",
    )
    sp.add_argument("session_id", metavar="ID")
    sp.add_argument(
        "words",
        nargs="+",
        metavar="[ROLE] TEXT",
        help=f"the message, quoted; its role ({', '.join(ROLES)}) may come first, "
        'as --role (treehop session add ID assistant "Use OAuth.")',
    )
    sp.add_argument("--role", choices=ROLES, help="the message's role (default user)")
    sp.add_argument("--json", action="store_true")
    _llm_options(sp)
    sp = ssub.add_parser("show", help="print a session's summary and messages", parents=common)
    sp.add_argument("session_id", metavar="ID")
    sp.add_argument("--json", action="store_true")
    sp = ssub.add_parser("list", help="list this user's sessions", parents=common)
    sp.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_session)

    p = add("ls", "list the children of a directory")
    p.add_argument("uri", nargs="?", default="viking://resources", metavar="URI")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ls)

    p = add("tree", "print a subtree with abstracts")
    p.add_argument("uri", nargs="?", default="viking://resources", metavar="URI")
    p.add_argument("--depth", type=int, default=3, help="levels below URI (default 3)")
    p.add_argument("--no-abstract", action="store_true", help="names only")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tree)

    p = add("read", "print the full text of a file (or a directory's overview)")
    p.add_argument("uri", metavar="URI")
    p.set_defaults(func=cmd_read)

    p = add("rm", "remove a folder, file or memory (and everything below it) from the index")
    p.add_argument("uri", metavar="URI")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_rm)

    p = add("tag", "show a node's tags, or add/remove user tags (no re-embedding)")
    p.add_argument("uri", metavar="URI")
    p.add_argument("--add", action="extend", nargs="+", metavar="TAG")
    p.add_argument("--remove", action="extend", nargs="+", metavar="TAG")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tag)

    p = add("retag", "recompute automatic tags (whole index or under URI), no re-embedding")
    p.add_argument("uri", nargs="?", metavar="URI")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_retag)

    p = add(
        "eval",
        "score a labelled query set: the means of nDCG@k, R@k (recall) and RR@k (reciprocal "
        "rank; its mean is MRR@k) (needs ir-measures)",
    )
    p.add_argument(
        "file", metavar="QUERIES_FILE", help='JSONL: {"query": ..., "relevant": {uri: grade}}'
    )
    p.add_argument("--k", type=int, default=10, help="cutoff and ranking depth (default 10)")
    p.add_argument("--target-uri", action="append", metavar="URI")
    p.add_argument("--type", choices=[c.value for c in ContextType])
    p.add_argument("--mode", choices=[m.value for m in RetrievalMode])
    p.add_argument("--tag", action="extend", nargs="+", metavar="TAG")
    p.add_argument(
        "--files-only",
        action="store_true",
        help="leave directories out of the hits; a hit inside a labelled directory counts "
        "as that directory",
    )
    p.add_argument("--per-query", action="store_true", help="a row per query")
    p.add_argument("--json", action="store_true")
    _reranker_option(p)
    p.set_defaults(func=cmd_eval)

    p = add("mcp", "serve the index to MCP clients over stdio (needs the 'mcp' extra)")
    p.add_argument("--read-only", action="store_true", help="leave out the add_memory tool")
    ranges = mcp_wire.LIMIT_RANGES
    p.add_argument(
        "--max-line-chars",
        dest="line_chars",
        type=_integer,
        metavar="N",
        help="the longest stdin line (one message) read, in characters; a longer one is "
        f"answered -32600 and dropped unread (default {mcp_wire.MAX_LINE_CHARS:,}; "
        f"{ranges['line_chars'][0]:,} to {ranges['line_chars'][1]:,})",
    )
    p.add_argument(
        "--write-deadline",
        dest="write_deadline_s",
        type=_number,
        metavar="SECONDS",
        help="end the session when an answer has waited this long for the client to read "
        f"it: a client that stopped reading stdout (default {mcp_wire.WRITE_DEADLINE_S:g}; "
        f"{ranges['write_deadline_s'][0]:g} to {ranges['write_deadline_s'][1]:,g})",
    )
    p.add_argument(
        "--max-in-flight",
        dest="max_in_flight",
        type=_integer,
        metavar="N",
        help="run at most N requests at once; past it stdin is read only to let a "
        f"cancellation through (default {mcp_wire.MAX_IN_FLIGHT}; "
        f"{ranges['max_in_flight'][0]} to {ranges['max_in_flight'][1]:,})",
    )
    p.add_argument(
        "--max-in-flight-chars",
        dest="max_in_flight_chars",
        type=_integer,
        metavar="N",
        help="at most N characters of unanswered requests run at once (one request alone "
        f"always runs) (default {mcp_wire.IN_FLIGHT_LINES} x --max-line-chars: "
        f"{mcp_wire.MAX_IN_FLIGHT_CHARS:,}; at least --max-line-chars, at most "
        f"{ranges['max_in_flight_chars'][1]:,})",
    )
    p.set_defaults(func=cmd_mcp)

    sub.add_parser(
        "demo",
        help="index the bundled sample tree and run example queries (treehop demo --help)",
        add_help=False,
    )
    return parser


# ---------------------------------------------------------------------------------- main
_COUNT_NAMES = frozenset({"k", "top-k", "topk", "similarity-top-k", "n", "limit"})
"""Other tools' names for how many hits (LangChain's ``k``, LlamaIndex's ``similarity_top_k``):
``--limit`` here (``--k`` for ``eval``)."""


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The parser of the (sub)command ``args`` chose: ``treehop session show``'s, not the
    top-level one."""
    current: argparse.ArgumentParser = parser
    while True:
        action = next(
            (a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None
        )
        chosen = getattr(args, action.dest, None) if action is not None else None
        if action is None or chosen not in action.choices:
            return current
        current = action.choices[chosen]


def _meant_option(parser: argparse.ArgumentParser, given: str) -> str | None:
    """The option of ``parser`` that ``given`` (an unknown option) most likely meant: the
    count option for another tool's name of it (``-k``, ``--top-k``), the same name written
    with ``_`` (``--target_uri``), else the closest spelling *as a name* (:func:`_named_alike`:
    a ratio of at least 0.7 on the names without their dashes), else the option whose name
    starts ``given``'s as its first word (``--json-lines``: :func:`_first_words_named`);
    ``None`` when nothing is close.

    Why (helper leftovers72c; review72's open item): the closest spelling was difflib's 0.6
    cutoff on the dashed spellings, where the shared ``--`` counts as two matching
    characters, so a word sharing two letters with an option read as it: ``treehop find q
    --secret=x`` was asked "did you mean --user?", ``--verbose`` "--role?". The no-command
    path had been moved to :func:`_named_alike` by review72; the command's own hints now
    use the same measure."""
    import difflib

    name = given.split("=", 1)[0].lstrip("-").lower().replace("_", "-")
    known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    if name in _COUNT_NAMES:
        for count in ("--limit", "--k"):
            if count in known:
                return count
    if f"--{name}" in known:
        return f"--{name}"
    names = {o[2:]: o for o in known}
    close = (
        difflib.get_close_matches(name, list(names), n=1, cutoff=NAMED_ALIKE)
        if len(name) <= 64
        else []
    )
    if close:
        return names[close[0]]
    checked = [
        o[2:] for a in parser._actions if _value_checked(a) for o in a.option_strings if o in known
    ]
    first = _first_words_named(name, checked) or _value_word_named(name, list(names))
    return names[first] if first is not None else None


VALUE_WORDS = frozenset(("path", "dir", "directory", "folder", "location", "url", "id", "name"))
"""Words other tools add to an option's name to say what its value is (pip's
``--index-url``, ``--user-id``, ``--session-id``, ``--tag-name``): :func:`_value_word_named`."""


def _value_word_named(name: str, known: Iterable[str]) -> str | None:
    """The known option name (dashes stripped, three letters or more) that ``name`` is,
    followed by one word saying what its value is (:data:`VALUE_WORDS`): ``index`` of
    ``index-url`` / ``index-path``, ``session`` of ``session-id``; ``None`` otherwise.

    Why (helper leftovers74; review73's open item): review73 hints a name with words added
    only as a flag or a checked option (``--user-agent`` is no ``--user``), which also lost
    the free-text options' own names spelled with their value's kind: ``--index-path`` and
    ``--session-id`` got no hint, and pip's ``--index-url`` was hinted ``--index`` only
    because its whole spelling is 0.71 alike. The added word here names the value the
    option takes, not another thing (``agent``), so the hint keeps the option's meaning."""
    for k in known:
        if len(k) >= 3 and name.startswith(k + "-") and name[len(k) + 1 :] in VALUE_WORDS:
            return k
    return None


def _value_checked(action: argparse.Action) -> bool:
    """Whether following a hint to ``action`` cannot silently carry a value into another
    meaning: it takes no value (``--json``), or argparse checks its value (a number's
    ``type``, ``choices``). :func:`_meant_option` hints a name with words added
    (:func:`_first_words_named`) only as such an option.

    Why (helper review73; leftovers73a's open item): ``treehop find q --user-agent x`` was
    asked "did you mean --user?": a free-text option takes whatever it is given, so the
    hint, followed, stores memories under a user named by a browser string. A flag's or a
    checked value's hint (``--json-lines``, ``--limit-docs``, ``--mode-name``) is right or
    refused. (A close spelling as a whole name is hinted whatever the option:
    :func:`_named_alike`'s 0.7.)"""
    return action.nargs == 0 or action.type is not None or action.choices is not None


def _first_words_named(name: str, known: Iterable[str]) -> str | None:
    """The longest of the ``known`` option names (dashes stripped, three letters or more)
    that is the first word or words of ``name`` (``json`` of ``json-lines``, ``limit`` of
    ``limit-docs``): the option a longer, hyphenated name given for it most likely meant;
    ``None`` when none is.

    Why (helper leftovers73a; leftovers72c's open item): measured as a whole spelling, a
    name with a word added is far from the option (``json-lines`` / ``json``: 0.57), so
    ``treehop find q --json-lines`` lost its "did you mean --json?" once hints asked 0.7
    of the names. A name's own first word is no shared-letters accident (review72's
    ``--secret`` read as ``--user``): it is only ever a whole known name followed by ``-``."""
    heads = [k for k in known if len(k) >= 3 and name.startswith(k + "-")]
    return max(heads, key=len) if heads else None


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
"""What argparse reads as a negative number (a positional), not an option."""


def _known_option(parser: argparse.ArgumentParser, arg: str) -> argparse.Action | bool | None:
    """The action of ``parser`` that the option ``arg`` names, as argparse reads it: exactly,
    as ``--opt=value``, or by an unambiguous prefix of a long option; ``True`` for an
    ambiguous prefix (argparse reports those itself); ``None`` when it names none."""
    name = arg.split("=", 1)[0] if arg.startswith("--") else arg
    actions = parser._option_string_actions
    if name in actions:
        return actions[name]
    if not (parser.allow_abbrev and arg.startswith("--")):
        return None
    matches = {actions[o] for o in actions if o.startswith("--") and o.startswith(name)}
    if len(matches) > 1:
        return True
    return next(iter(matches), None)


def _options_before_command(
    parser: argparse.ArgumentParser, argv: Sequence[str]
) -> tuple[list[str], argparse.ArgumentParser, list[str]]:
    """The arguments given before a (sub)command's name that the parser reading them does
    not know (an unknown option and the words after it up to a command name: its values),
    the parser of the command they precede, and that command's names (``["session",
    "show"]``). One pass over ``argv``, as argparse reads it: each level's own options (and
    their values) are skipped, its first other word is its command; it stops at a command
    with no subcommands, at ``--``, and at a word that is no command and follows no unknown
    option (argparse's "invalid choice")."""
    current, path, misplaced = parser, [], []
    i, after_unknown = 0, False
    while i < len(argv):
        choose = next(
            (a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None
        )
        arg = argv[i]
        if choose is None or arg == "--":
            break
        i += 1
        if _ascii_dashes(arg) != arg:
            # (an option typed with a page's dashes, ``—limit 3``: argparse reads it as the
            # command's name and quoted it, ``invalid choice: '—api-key=sk-...'``, with no
            # hint; helper attacks84)
            misplaced.append(arg)
            after_unknown = True
            continue
        if arg.startswith("-") and arg != "-" and not _NEGATIVE_NUMBER.match(arg):
            action = _known_option(current, arg)
            if action is None:
                misplaced.append(arg)
                after_unknown = True
                continue
            after_unknown = False
            if isinstance(action, argparse.Action) and action.nargs is None and "=" not in arg:
                i += 1  # (its value)
            continue
        if arg in choose.choices:
            current, after_unknown = choose.choices[arg], False
            path.append(arg)
        elif after_unknown:
            misplaced.append(arg)  # (an unknown option's value: ``--limit 3 find``)
        else:
            break
    return misplaced, current, path


def _refuse_options_before_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A usage error, from the command's own parser, for options given before the command's
    name that only the command reads: each named as an option of that command, to go after
    its name (or the one it most likely meant, there).

    Why (helper leftovers68b; usage78's open item): ``treehop --index idx --json index d``
    answered "unrecognized arguments: --json; --json: did you mean --json?", the option
    offered as its own fix; ``treehop --limit 3 find q`` "invalid choice: '3'" with the
    top-level usage, naming neither ``find`` nor where ``--limit`` goes."""
    misplaced, command, path = _options_before_command(parser, argv)
    if misplaced and not path:
        _refuse_options_without_command(parser, misplaced)
    if not misplaced or not path:
        return  # (no command named: argparse's own error says so)
    name = " ".join(path)
    shown = misplaced[:SHOWN_EXTRAS]
    values = _secret_values(misplaced)  # (a key is no option to hint at)
    hints = []
    for given in (w for i, w in enumerate(shown) if i not in values):
        option = given.split("=", 1)[0]
        typed = _ascii_dashes(given)
        own = _known_option(parser, typed) if typed != given else None
        if isinstance(own, argparse.Action):  # (``—index idx find q``: treehop's own)
            hints.append(f"{_shown_arg(option)}: did you mean {own.option_strings[-1]}?")
            continue
        meant = _meant_option(command, typed) if typed.startswith("-") else None
        if meant is None:
            continue
        if meant == option:
            hints.append(
                f"{_shown_arg(option)} is an option of 'treehop {name}': give it after '{path[-1]}'"
            )
        else:
            hints.append(f"{_shown_arg(option)}: did you mean {meant}, after '{path[-1]}'?")
    listed = _shown_args(misplaced)
    if not hints:
        hints.append(f"options of 'treehop {name}' go after '{path[-1]}'")
    command.error("; ".join([f"unrecognized arguments: {listed} (before '{path[-1]}')", *hints]))


def _refuse_options_without_command(parser: argparse.ArgumentParser, misplaced: list[str]) -> None:
    """A usage error, from ``treehop``'s own parser, for unknown options (and their values)
    given with no command after them: each named with what it most likely meant. A
    typographically dashed spelling of one of ``treehop``'s own options (``—version``,
    ``—help``, ``—verison``) is hinted as that option; an option some command reads
    (``--limit``, ``—limit``; another tool's ``--top-k``) as that command's, to go after the
    command, which is what is missing.

    Why (helper leftovers71e; leftovers71d's open item): ``treehop —version`` (copied from a
    page that typeset ``--version``) was argparse's "invalid choice: '—version'" with the
    list of commands, as if a command had been misspelled. And (stop 72, the lead)
    ``treehop --limit 3`` was "invalid choice: '3'", the option's value read as a misspelled
    command and the option never named; ``treehop --api-key sk-...`` printed the key whole
    in that "invalid choice" (argparse quotes the word it read as the command): the
    arguments are now listed by :func:`_shown_args`, a key masked."""
    values = _secret_values(misplaced)  # (a key is no option to hint at)
    hints, missing = [], False
    for i, given in enumerate(misplaced[:SHOWN_EXTRAS]):
        typed = _ascii_dashes(given)
        if i in values or not typed.startswith("-") or typed == "-":
            continue
        shown = _shown_arg(given.split("=", 1)[0])
        form = _command_form(parser, typed, misplaced[i + 1 : i + 2])
        if form is not None:  # (``treehop --session show``: the command ``session show``)
            hints.append(f"{shown}: did you mean '{form}'? ({form.split()[1]} is a command)")
            continue
        own = _known_option(parser, typed) if typed != given else None
        if isinstance(own, argparse.Action):  # (``—version``: treehop's own)
            hints.append(f"{shown}: did you mean {own.option_strings[-1]}?")
            continue
        meant, readers = _option_of_commands(parser, typed, fuzzy=False)
        own_typo = _meant_option(parser, typed) if typed != given else None
        if meant is None and own_typo is not None:  # (``—verison``)
            hints.append(f"{shown}: did you mean {own_typo}?")
            continue
        if meant is None:
            meant, readers = _option_of_commands(parser, typed, fuzzy=True)
        if meant is None:
            continue
        missing = True
        names = ", ".join(f"'{n}'" for n in readers[:SHOWN_COMMANDS])
        names += ", ..." if len(readers) > SHOWN_COMMANDS else ""
        said = "is" if meant == shown else f"reads as {meant},"
        hints.append(
            f"{shown} {said} an option of {names}: give the command first, then {meant} "
            f"after it (treehop {readers[0]} ... {meant} ...)"
        )
    head = "a command is missing; " if missing or not hints else ""
    parser.error("; ".join([f"{head}unrecognized arguments: {_shown_args(misplaced)}", *hints]))


def _command_form(parser: argparse.ArgumentParser, typed: str, after: Sequence[str]) -> str | None:
    """``"treehop session show"`` for ``--session show`` given with no command: an option
    spelling of a command's name followed by one of that command's actions (or of a command
    that has none and no command reads as an option, ``--demo``); ``None`` otherwise. Only
    the command's own words are printed.

    Why (helper leftovers74): ``treehop --session show ID`` (a global-looking flag, as other
    tools take ``--session``) was hinted as ``search``'s ``--session`` ("give the command
    first, then --session after it"), where the command it reads as is ``treehop session
    show``."""
    if "=" in typed:
        return None
    name = typed.lstrip("-").lower()
    choose = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if choose is None or name not in choose.choices:
        return None
    sub = choose.choices[name]
    actions = next((a for a in sub._actions if isinstance(a, argparse._SubParsersAction)), None)
    if actions is None:  # (``--demo``; not ``--tag``, which ``find`` reads: hinted as that)
        return None if _option_of_commands(parser, typed, fuzzy=False)[0] else f"treehop {name}"
    if after and after[0] in actions.choices:
        return f"treehop {name} {after[0]}"
    return None


SHOWN_COMMANDS = 4
"""The most commands a hint names for an option given with no command (``--limit``)."""


def _option_of_commands(
    parser: argparse.ArgumentParser, typed: str, *, fuzzy: bool
) -> tuple[str | None, list[str]]:
    """The option ``typed`` names among the commands of ``treehop`` (exactly or by an
    unambiguous prefix; with ``fuzzy``, as another tool's name of it or a misspelling:
    ``--top-k`` for ``--limit``, by :func:`_meant_option`, for a name of three letters or
    more, as ``-x`` is no spelling of ``--index``) and the commands that read it
    (each as typed: ``find``, ``session show``), in the parser's order; ``(None, [])`` when
    none does.

    Why: ``treehop --limit 3`` (no command) was argparse's "invalid choice: '3'", the option's
    value read as a misspelled command and the option itself never named."""
    commands: list[tuple[str, argparse.ArgumentParser]] = []
    pending: list[tuple[str, argparse.ArgumentParser]] = [("", parser)]
    while pending:
        prefix, current = pending.pop(0)
        for action in current._actions:
            if not isinstance(action, argparse._SubParsersAction):
                continue
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # (an alias of a command already read: once)
                    seen.add(id(sub))
                    commands.append((f"{prefix} {name}".strip(), sub))
                    pending.append((f"{prefix} {name}".strip(), sub))
    exact: dict[str, list[str]] = {}
    for path, sub in commands:
        read = _known_option(sub, typed)
        if isinstance(read, argparse.Action):
            exact.setdefault(read.option_strings[-1], []).append(path)
    name = typed.split("=", 1)[0].lstrip("-")
    if not exact and fuzzy and (len(name) >= 3 or name.lower() in _COUNT_NAMES):
        for path, sub in commands:
            meant = _meant_option(sub, typed)
            if meant is not None and _named_alike(name, meant):
                exact.setdefault(meant, []).append(path)
    if not exact:
        return None, []
    meant = max(exact, key=lambda o: len(exact[o]))  # (the one most commands read; first on ties)
    return meant, exact[meant]


def _named_alike(name: str, meant: str) -> bool:
    """Whether an unknown option's ``name`` (its dashes stripped) reads as ``meant``: another
    tool's count name (:data:`_COUNT_NAMES`), ``meant``'s name followed by more words
    (``--json-lines`` for ``--json``: :func:`_first_words_named`), or a spelling close *as a
    name*: a ratio of at least 0.7 on the names without their dashes (a dropped or swapped
    letter of a four-letter name, ``--lmit``, ``--mdoe``, ``--usr``, is 0.75 or more;
    difflib's own 0.6 let two shared letters of a six-letter word through: ``--secret``
    read as ``--user``).

    Why (helper review72): :func:`_meant_option` compares the dashed spellings, where the
    shared ``--`` counts as two matching characters, and :func:`_option_of_commands` asks it
    of every command: some command always had an option "close" to any word, and
    ``treehop --verbose`` was hinted as ``--role``, ``--quiet`` as ``--user``, ``--debug``
    as ``--mode``, each to be given after a command that has no such meaning."""
    import difflib

    bare = name.lower().replace("_", "-")
    if bare in _COUNT_NAMES or _first_words_named(bare, [meant.lstrip("-")]) is not None:
        return True
    return difflib.SequenceMatcher(None, bare, meant.lstrip("-")).ratio() >= NAMED_ALIKE


NAMED_ALIKE = 0.7
"""The least difflib ratio, on option names without their dashes, at which an unknown option
reads as a known one (:func:`_named_alike`, :func:`_meant_option`)."""


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)``, with unknown arguments reported by the command's own
    parser (its usage line, ``treehop find: error:``) and, for an unknown option, the one it
    most likely meant. Why: ``treehop find "q" -k 2`` (or ``--top-k``, ``--tags``) got the
    top-level usage and a bare "unrecognized arguments", naming neither ``find``'s options
    nor ``--limit``."""
    _refuse_options_before_command(parser, argv)
    args, extras = parser.parse_known_args(argv)
    if extras:
        command = _command_parser(parser, args)
        shown = extras[:SHOWN_EXTRAS]
        values = _secret_values(extras)  # (a key is no option to hint at)
        hints = [
            _hint_after_command(parser, command, given)
            for i, given in enumerate(shown)
            if _ascii_dashes(given).startswith("-") and given != "-" and i not in values
        ]
        listed = _shown_args(extras)
        command.error("; ".join([f"unrecognized arguments: {listed}", *filter(None, hints)]))
    return args


def _hint_after_command(
    parser: argparse.ArgumentParser, command: argparse.ArgumentParser, given: str
) -> str:
    """What an unknown option given after the command's name most likely meant: an option
    of ``treehop`` itself that the command does not read (``--version``) goes before the
    command (helper leftovers68b: ``treehop find q --version`` was asked "did you mean
    --json?"); else the command's option it is another spelling of; else nothing.

    An option typed with a page's dashes (``—limit``, ``–-limit``: :func:`_ascii_dashes`)
    is read as its ASCII spelling, so ``treehop find q —limit 3`` is asked "did you mean
    --limit?" (helper leftovers71c; attacks83 saw it listed with no hint)."""
    option = _shown_arg(given.split("=", 1)[0])
    typed = _ascii_dashes(given)
    own = typed != given and isinstance(_known_option(command, typed), argparse.Action)
    if not own and isinstance(_known_option(parser, typed), argparse.Action):
        first = command.prog.split()[1] if len(command.prog.split()) > 1 else "COMMAND"
        return f"{option} is an option of 'treehop' itself: give it before '{first}'"
    meant = _meant_option(command, typed)
    # (the command's own option, unread: a word after ``--``; never offered as its own fix,
    # but one given with other dashes is: the fix is the dashes)
    if not meant or (meant == option and typed == given):
        return ""
    return f"{option}: did you mean {meant}?"


MAX_ARGS = 10_000
"""The most arguments a command line may hold (``ARG_MAX`` lets a generated one hold ~100,000)."""
MAX_OPTIONS = 1_024
"""The most options (arguments starting with ``-``, before a ``--``) a command line may hold:
four times the repeatable options' own limits (256 ``--exclude`` patterns, 256 tags)."""


def _check_argv(argv: Sequence[str]) -> None:
    """A command line within :data:`MAX_ARGS` / :data:`MAX_OPTIONS`, else a usage error that
    says so, before argparse reads any of it.

    Why: argparse's parse is quadratic in the options it meets (each one looks up the next
    option's index in a list of them all): 20,000 unknown options (a generated command line)
    took ~8 s of CPU before treehop's own bounded error (helper attacks75), 4,096 ~1.4 s;
    1,024 take ~0.1 s. Counting costs one pass, no argument is copied or shown."""
    if len(argv) > MAX_ARGS:
        raise CliError(
            f"the command line holds {len(argv):,} arguments; at most {MAX_ARGS:,}",
            ExitCode.USAGE,
        )
    options = 0
    for arg in argv:
        if arg == "--":
            break
        options += arg.startswith("-") and arg != "-"
    if options > MAX_OPTIONS:
        raise CliError(
            f"the command line holds {options:,} options (arguments starting with '-'); "
            f"at most {MAX_OPTIONS:,}",
            ExitCode.USAGE,
        )


SHOWN_EXTRAS = 10
"""How many unknown arguments the command line's error lists (then ``and N more``)."""
SHOWN_ARG_CHARS = 100
"""How many characters of each listed argument it shows (``...`` after a cut)."""


def _shown_arg(arg: str) -> str:
    """An unknown argument as the error shows it: cut to :data:`SHOWN_ARG_CHARS`, its
    control characters escaped (``\\x1b``: a terminal's escape sequence is not run), redacted.

    Why (helper attacks75): the error echoed every unknown argument whole, with a "did you
    mean" search for each: ``--api_key=sk-...`` (a typo of an option that takes no key, a
    line pasted from another tool) printed the key to the terminal and any log of it, and
    20,000 unknown options (a generated command line) took ~10 s of CPU for a 209 kB
    message."""
    cut = cut_text(arg, SHOWN_ARG_CHARS)  # (a key the cut runs through masked whole)
    return redact("".join(c if c.isprintable() else repr(c)[1:-1] for c in cut))


_SECRET_OPTION = re.compile(
    r"(?i)--?[a-z0-9_-]{0,60}?(?:key|token|secret|password|passwd|pwd|passphrase|auth|"
    r"authorization|bearer|signature|credentials?)"
)
"""An option name that says its value is a credential (``--api-key``, ``--token``,
``--password``, ``--hf-auth``), matched whole (``fullmatch``; at most ~75 characters).
``authorization`` / ``bearer`` / ``signature`` too (helper attacks82): :func:`redact`
masked ``--authorization=...`` but ``--authorization Bearer...`` as two words was shown."""


_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
"""Characters a word processor, a chat client or a web page puts where ``--`` was typed (an
en or em dash, a minus sign, their full-width forms)."""


def _ascii_dashes(word: str) -> str:
    """``word`` with leading dashes of which any is typographic (:data:`_DASHES`) read as
    the ASCII an option has: ``--`` before a long name (``—limit``, ``–-limit``,
    ``−−limit``: ``--limit``), ``-`` before one letter (``–k``); else ``word`` unchanged.
    (An em dash stands for the two hyphens a page's typesetting joined.)"""
    rest = word.lstrip("-" + _DASHES)
    lead = word[: len(word) - len(rest)]
    if not any(c in _DASHES for c in lead):
        return word
    return ("--" if len(rest.partition("=")[0]) > 1 else "-") + rest


def _secret_option(word: str) -> bool:
    """Whether ``word``'s name (before any ``=``) says its value is a credential
    (:data:`_SECRET_OPTION`), its leading dashes read as ``-`` whatever dash they are
    (:func:`_ascii_dashes`) and a ``:`` after the name ignored.

    Why (helper attacks83): a command copied from a page that set ``--api-key`` as
    ``—api-key`` (an em dash; ``–-token`` with an en dash) or from a config line
    (``--password: ...``) is not an option to argparse, so both words were listed as
    unknown arguments, the key shown whole."""
    name = _ascii_dashes(word).partition("=")[0].rstrip(":")
    return name.startswith("-") and _SECRET_OPTION.fullmatch(name) is not None


def _shown_args(words: Sequence[str]) -> str:
    """The unknown arguments as the error lists them: the first :data:`SHOWN_EXTRAS`, each
    :func:`_shown_arg`, then ``and N more``; the value of a credential-named option
    (:data:`_SECRET_OPTION`) shown as ``***``, given as the next word or after ``=``.

    Why (helper attacks81): :func:`redact` knows ``--api-key=sk-...`` but not a key given
    as the next word, so ``treehop --api-key sk-... find q`` (stop 68's misplaced-option
    error lists an unknown option's values) and ``treehop find q --api-key sk-...`` (an
    option another tool takes, pasted) printed the key to the terminal and any log of it;
    ``--key=...`` and ``--credentials=...`` past it too."""
    values = _secret_values(words)
    shown = []
    for i, word in enumerate(words[:SHOWN_EXTRAS]):
        name, eq, _ = word.partition("=")
        if i in values:
            shown.append(MASK)
        elif eq and _secret_option(word):
            shown.append(f"{_shown_arg(name)}={MASK}")
        else:
            shown.append(_shown_arg(word))
    listed = " ".join(shown)
    if len(words) > SHOWN_EXTRAS:
        listed += f" and {len(words) - SHOWN_EXTRAS} more"
    return listed


_OPTION_SHAPE = re.compile(r"--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
"""What an option's name looks like (``--api-key``, ``--frobnicate``, ``--hf_token``): lower
case words joined by single dashes or underscores, at most :data:`_OPTION_SHAPE_CHARS`
characters with its dashes."""
_OPTION_SHAPE_CHARS = 40


def _secret_values(words: Sequence[str]) -> set[int]:
    """The positions among the first :data:`SHOWN_EXTRAS` ``words`` that are a
    credential-named option's value given as the next word: masked by :func:`_shown_args`,
    and given no "did you mean" hint. A value may start with one dash (a URL-safe base64
    key does one time in 64; helper attacks82: ``--api-key -Xk3...`` was shown whole, and
    a hint named a dash-led key that looked like an option) or two (one time in 4,096:
    ``--api-key --Xk3_...`` was listed as another unknown option, the key whole; helper
    leftovers71a); a word after it is taken as another option only when it has an
    option's shape (:data:`_OPTION_SHAPE`), which a key of mixed case, or longer than any
    option, has not."""
    out: set[int] = set()
    after_secret = False
    for i, word in enumerate(words[:SHOWN_EXTRAS]):
        if after_secret and not _option_shaped(word.partition("=")[0]):
            out.add(i)
        after_secret = "=" not in word and _secret_option(word)
    return out


def _option_shaped(name: str) -> bool:
    """Whether ``name`` (a word before any ``=``) looks like an option's name."""
    return len(name) <= _OPTION_SHAPE_CHARS and _OPTION_SHAPE.fullmatch(name) is not None


_USAGE_ERRORS = (InvalidURIError, InvalidQueryError, InvalidFilterError, InvalidTagError)


def _message_for(exc: TreehopError) -> str:
    """The error's text, less the Python API's advice where the command line has its own."""
    return str(exc).removesuffix(f": {SEARCH_SESSION_HINT}")


BUILT_WITH_ANOTHER_MODEL_HINT = (
    "the CLI embeds with treehop's default embedder; search this index from Python with the\n"
    "model it was built with: Treehop(path, embedder=LangChainEmbedder(...)) or the vector\n"
    "store you built it with. ls, tree and read (and tag, session list) work on it as it is."
)
"""What a command that embeds says on an index built with another model (helper usage82)."""


def _hint_for(exc: TreehopError) -> str | None:
    # (the URI syntax is no help for a well-formed URI naming a leaf, nor for a user name)
    text = str(exc)
    if isinstance(exc, InvalidURIError) and text.endswith(" is a leaf, not a directory"):
        return f"print it with: treehop read {text.removesuffix(' is a leaf, not a directory')}"
    if isinstance(exc, InvalidURIError) and text.startswith("invalid user name"):
        return "--user (or $TREEHOP_USER) names whose viking://~/memories and ~/skills are meant"
    if isinstance(exc, InvalidURIError):
        return URI_HINT
    if isinstance(exc, SessionNotFoundError):
        return "start one with: treehop session new (add its messages with: treehop session add)"
    if isinstance(exc, NotFoundError) and not isinstance(exc, SessionNotFoundError):
        # (by type: a URI holding the word "session" lost this hint when told by the text)
        return "see what is there with: treehop tree viking://resources"
    if isinstance(exc, IngestError):
        return "treehop reads text, Markdown, HTML and source files; binary files are skipped"
    if isinstance(exc, EmbeddingError) and text.endswith("would mix vector spaces"):
        return BUILT_WITH_ANOTHER_MODEL_HINT
    return None


def _code_for(exc: TreehopError) -> ExitCode:
    if isinstance(exc, _USAGE_ERRORS):
        return ExitCode.USAGE
    if isinstance(exc, NotFoundError):
        return ExitCode.NOT_FOUND
    if isinstance(exc, IngestError):
        return ExitCode.INGEST
    return ExitCode.ERROR


def _report(err: TextIO, message: str, hint: str | None) -> None:
    # (redacted as the log lines are: an error or hint quoting what the caller gave, a URI
    # with ``user:token@`` or a file's line, printed a credential to the terminal and any log
    # of it; helper attacks85)
    print(f"treehop: error: {redact(render.printable(message))}", file=err)
    for line in (hint or "").splitlines():
        print(f"  {redact(render.printable(line))}", file=err)  # (a hint may repeat a URI)


def main(argv: Sequence[str] | None = None, *, client_factory: ClientFactory | None = None) -> int:
    """Run one ``treehop`` command; returns the exit code (see :class:`ExitCode`).

    ``client_factory`` replaces how the index is opened (tests inject a small embedder).
    """
    program = argv is None  # the console script: this process ends with the command
    command = ""
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = sys.stdout, sys.stderr
    debug = os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        _check_argv(argv)
        if argv[:1] == ["demo"]:
            from ..demo import main as demo_main

            try:
                return demo_main(argv[1:])
            except SystemExit as exc:  # the demo's own argparse: --help or a usage error
                return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
        parser = build_parser()
        try:
            args = _parse(parser, argv)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
        command = str(args.command)
        ctx = _Ctx(args, client_factory or default_client_factory, out, err)
        code = int(args.func(ctx))
        if program and command == "mcp":
            # The server returns within a millisecond of its client's EOF and the index is
            # closed (saved); what remained was the interpreter's teardown collecting the
            # heap of ~1,000 modules the SDK and the models import: 0.4-0.7 s idle, 1-3 s on
            # a loaded machine, each time a client (an IDE, an agent) restarts the server.
            # Frozen objects are left out of those collections; the process ends next.
            gc.freeze()
        return code
    except CliError as exc:
        _report(err, str(exc), exc.hint)
        return exc.code
    except TreehopError as exc:
        if debug:
            raise
        _report(err, _message_for(exc), _hint_for(exc))
        return _code_for(exc)
    except KeyboardInterrupt:
        print(
            "treehop: interrupted (what was committed is kept; run the command again to resume)"
            if command == "index"
            else "treehop: interrupted",
            file=err,
        )
        if program:
            # The program's end: worker threads may still be inside onnxruntime or numpy
            # (they cannot be interrupted) and the interpreter would wait for them at exit.
            # Every commit is already on disk (fsynced), the index lock is a file lock the
            # kernel releases: leave at once, with the streams flushed.
            for stream in (out, err):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
            os._exit(ExitCode.INTERRUPTED)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # The reader (``| head``) went away: stop quietly, and keep Python from printing a
        # second error while flushing stdout at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return ExitCode.ERROR
    except OSError as exc:
        # What the OS refused outside treehop's own checks (an --index path too long for
        # it, a parent that is a file): a message, not a traceback.
        if debug:
            raise
        where = f": {_short_path(exc.filename)}" if exc.filename is not None else ""
        _report(err, f"{exc.strerror or type(exc).__name__}{where}", None)
        return ExitCode.ERROR
