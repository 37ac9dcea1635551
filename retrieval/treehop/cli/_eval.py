"""``treehop eval``: run a labelled query set and score the rankings with ``ir_measures``.

The file is JSON Lines, one query per line::

    {"id": "q1", "query": "how do we validate OAuth tokens",
     "relevant": {"viking://resources/security/auth/oauth.md": 2}}

``id`` is optional (the line number is used), grades are integers >= 0 (0 = judged not
relevant), blank lines and lines starting with ``#`` are skipped.

Metrics come from ``ir_measures`` (the per-query values; the trec_eval definitions), but two
things are done here on purpose:

* the ranking is passed as scores ``n, n-1, ..., 1``: trec_eval sorts by score and breaks ties by
  document id, which would silently reorder hits that treehop ranked with equal scores;
* the mean is taken here over *every* query in the file, a query that retrieved nothing
  counting 0: whether a metric provider drops such queries from its aggregate differs between
  providers and versions (plain ``pytrec_eval`` does), and dropping them would inflate the
  averages exactly when the search fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidQueryError, InvalidURIError, TreehopError
from ..uri import CHUNK_MARK
from ..validation import check_query


class EvalFileError(InvalidQueryError):
    """The labelled query file is malformed (a line number says where)."""


@dataclass
class LabelledQuery:
    qid: str
    query: str
    relevant: dict[str, int]
    line: int


@dataclass
class EvalReport:
    k: int
    metrics: dict[str, float]
    per_query: list[dict[str, Any]] = field(default_factory=list)
    unknown_relevant: dict[str, list[str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "queries": len(self.per_query),
            "k": self.k,
            "metrics": self.metrics,
            "per_query": self.per_query,
            "unknown_relevant": self.unknown_relevant,
        }


MAX_GRADE = 2**16 - 1
"""The largest relevance grade (65,535; qrels in use grade 0 to 4). trec_eval (through
``pytrec_eval``) keeps a grade in a C ``int`` (``2**32`` wrapped to 0, ``10**400`` left a
``SystemError``), and its nDCG keeps one 8-byte counter per grade level up to the largest
grade: the C ``int`` limit ``2**31 - 1``, the bound before stop 68, took 17 GB for one
query (``10**8``: 0.8 GB). At this bound the counters take 0.5 MB."""

MAX_QUERY_ID_CHARS = 1000


def _query_id(value: object, where: str) -> str:
    """A query's ``id`` as the metric provider can key it: ``pytrec_eval`` passes ids as C
    strings, so a NUL cut the id short (``"a\\x00b"`` came back as ``"a"``: a raw
    ``KeyError``, and two ids sharing a prefix would merge) and a lone surrogate crashed the
    interpreter (a segmentation fault while encoding it)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise EvalFileError(f"{where}: 'id' must be a string or an integer")
    qid = str(value)
    if not qid.strip() or "\x00" in qid or len(qid) > MAX_QUERY_ID_CHARS:
        raise EvalFileError(
            f"{where}: 'id' must be non-empty, at most {MAX_QUERY_ID_CHARS} characters, without NUL"
        )
    try:
        qid.encode("utf-8")
    except UnicodeEncodeError:
        raise EvalFileError(f"{where}: 'id' contains a lone surrogate") from None
    return qid


MAX_EVAL_FILE_BYTES = 64 * 2**20
"""The largest query file ``treehop eval`` reads (a labelled set of 100,000 queries is a
few MB)."""


_UTF32_MARKS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
_SAVE_AS_UTF8 = (
    "save it as UTF-8 (PowerShell: Get-Content in.jsonl | Set-Content -Encoding utf8 "
    "out.jsonl; an editor's 'Save as' > UTF-8)"
)


def query_text(path: Path, data: bytes) -> str:
    """The query file's text: UTF-8 (a byte order mark dropped), or UTF-16 / UTF-32 that
    starts with its byte order mark; anything else refused in plain words.

    Why: a file written by PowerShell 5's ``>`` (or ``Out-File``) is UTF-16 with a mark,
    and ``treehop index`` reads such a text file; here it was refused in the codec's words
    ("'utf-8' codec can't decode byte 0xff in position 0", helper attacks82). A mark says
    the encoding, so it is read; without one no guess is made (a wrong guess changes the
    queries' text and labels silently): a byte that is not UTF-8 is named with its line,
    and NUL bytes (UTF-16 with no mark decodes as UTF-8 text full of them) say what they
    likely are. A UTF-8 mark: helper usage80 (it was "Unexpected UTF-8 BOM" on line 1)."""
    marked = next(
        (
            enc
            for enc, marks in (("utf-32", _UTF32_MARKS), ("utf-16", _UTF16_MARKS))
            if data.startswith(marks)
        ),
        None,
    )
    if marked is not None:
        try:
            return data.decode(marked)
        except UnicodeDecodeError:
            raise EvalFileError(
                f"cannot read query file {path}: it starts with a {marked.upper()} byte order "
                f"mark but the rest is not {marked.upper()} text; {_SAVE_AS_UTF8}"
            ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise EvalFileError(
            f"cannot read query file {path}: line {line} is not UTF-8 text (byte "
            f"0x{data[exc.start]:02x}), and the file has no byte order mark naming another "
            f"encoding; {_SAVE_AS_UTF8}"
        ) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise EvalFileError(
            f"cannot read query file {path}: line {line} holds NUL bytes (UTF-16 without a "
            f"byte order mark?); {_SAVE_AS_UTF8}"
        )
    return text


_RELEVANT_IS = "a non-empty object {uri: grade} or list of URIs"

_SHOWN_KEYS = 8
"""How many of a line's keys an error about a missing one lists."""


def _keys_of(obj: Mapping[str, Any]) -> str:
    """A line's keys for an error: the first few, each cut short (a line is the user's text,
    as long as it likes)."""
    keys = [f"{k:.40}" for k in list(obj)[:_SHOWN_KEYS]]
    more = len(obj) - len(keys)
    return ", ".join(keys) + (f", ... ({more} more)" if more > 0 else "") if keys else "none"


def _relevant_object(rel: object, where: str) -> dict[str, Any]:
    """The labels as ``{uri: grade}``; a list of URIs is each graded 1.

    Why a list (helper usage82): LlamaIndex's retrieval datasets
    (``EmbeddingQAFinetuneDataset.relevant_docs``) and ``RetrieverEvaluator(expected_ids=)``
    list the relevant ids, and a hand-written line says ``"relevant": ["viking://..."]``;
    that was refused as "must be a non-empty object". Graded 1, as binary relevance is."""
    if isinstance(rel, list) and rel:
        for i, uri in enumerate(rel):
            if not isinstance(uri, str):
                raise EvalFileError(
                    f"{where}: 'relevant' list item {i} must be a URI string, "
                    f"got {type(uri).__name__}"
                )
        return dict.fromkeys(rel, 1)
    if not isinstance(rel, dict) or not rel:
        raise EvalFileError(f"{where}: 'relevant' must be {_RELEVANT_IS}")
    return rel


def load_queries(path: Path, normalize: Callable[[str], str]) -> list[LabelledQuery]:
    """Parse and validate the JSONL file; relevant URIs are normalised like user input.

    At most :data:`MAX_EVAL_FILE_BYTES` are read: ``treehop eval /dev/zero`` (or a
    generator's endless pipe) read without a bound until memory ran out, with no message."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_EVAL_FILE_BYTES + 1)
    except FileNotFoundError as exc:
        raise EvalFileError(f"query file not found: {path}") from exc
    except OSError as exc:
        raise EvalFileError(f"cannot read query file {path}: {exc}") from exc
    if len(data) > MAX_EVAL_FILE_BYTES:
        raise EvalFileError(
            f"query file {path} is larger than {MAX_EVAL_FILE_BYTES // 2**20} MB "
            "(or endless); split it"
        )
    text = query_text(path, data)
    out: list[LabelledQuery] = []
    seen: set[str] = set()
    # (lines split at "\n" only, as JSON Lines is: ``str.splitlines`` also split at U+2028 /
    # U+2029 / NEL / form feed, which JSON allows raw inside a string; a query holding one,
    # written with ``ensure_ascii=False``, was "not valid JSON (Unterminated string)" and
    # its line numbers were off by one from the line count that names a bad byte; attacks84)
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalFileError(f"{where}: not valid JSON ({exc.msg})") from exc
        except RecursionError:  # nesting past the recursion limit
            raise EvalFileError(f"{where}: not valid JSON (nested too deeply)") from None
        except ValueError as exc:  # an integer of more than 4,300 digits
            why = str(exc).split(";")[0][:120]
            raise EvalFileError(f"{where}: not valid JSON ({why})") from None
        if not isinstance(obj, dict):
            raise EvalFileError(f"{where}: expected an object with 'query' and 'relevant'")
        for key, what in (("query", "a non-empty string"), ("relevant", _RELEVANT_IS)):
            if key not in obj:  # (a line naming it otherwise: "question", "relevant_docs")
                raise EvalFileError(
                    f"{where}: {key!r} must be {what}: the line has no {key!r} key "
                    f"(keys: {_keys_of(obj)})"
                )
        query = obj.get("query")
        if not isinstance(query, str) or not query.strip():
            raise EvalFileError(f"{where}: 'query' must be a non-empty string")
        try:  # here, not at its find: a bad last line must not cost every find before it
            check_query(query)
        except InvalidQueryError as exc:
            raise EvalFileError(f"{where}: {exc}") from None
        rel = _relevant_object(obj.get("relevant"), where)
        relevant: dict[str, int] = {}
        for uri, grade in rel.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= MAX_GRADE:
                raise EvalFileError(
                    f"{where}: grade of {uri!r:.200} must be an integer >= 0 and <= {MAX_GRADE}"
                )
            try:
                relevant[normalize(uri)] = grade
            except InvalidURIError as exc:
                raise EvalFileError(f"{where}: {exc}") from exc
        if not any(g > 0 for g in relevant.values()):
            raise EvalFileError(f"{where}: no URI has a grade > 0, so nothing can be found")
        qid = _query_id(obj["id"], where) if "id" in obj else f"line-{n}"
        if qid in seen:
            raise EvalFileError(f"{where}: duplicate query id {qid!r}")
        seen.add(qid)
        out.append(LabelledQuery(qid, query, relevant, n))
    if not out:
        raise EvalFileError(f"{path}: no queries (expected JSON Lines with 'query' and 'relevant')")
    return out


def judged_uri(hit: str, relevant: Mapping[str, int], *, files_only: bool = False) -> str:
    """The URI a hit is judged as: a chunk of a file that the query's labels name (and that
    do not name the chunk itself) is that file; with ``files_only``, a hit inside a labelled
    directory whose own file no label names is the deepest such directory.

    Why (helper usage80): a file long enough to be chunked is stored as ``file#chunk-N``
    leaves, and ``find`` returns those passages, so a label on the file (what anyone writes,
    and what the docs' example does) never matched: ``treehop eval`` scored 0 a query whose
    first hit was the labelled file's passage. The benchmarks judge so too (a passage counts
    for the document it comes from). A chunk labelled itself is judged as itself, and
    several chunks of one file count once, at the best rank.

    Why the directories only under ``files_only`` (helper leftovers70a): ``--files-only``
    drops every directory from the hits, so a labelled directory could never be found and
    scored 0 whatever the ranking, as a chunked file's label did before. There the files are
    what stands for a directory, as a file's chunks stand for the file. Without it, a
    directory is a hit of its own and its label means that hit: a file inside it is not it."""
    if hit in relevant:
        return hit
    file_uri, mark, _ = hit.partition(CHUNK_MARK)
    if mark and file_uri in relevant:
        return file_uri
    if files_only:
        root = file_uri.find("://") + 2  # (the scheme's slashes are no directory)
        head = file_uri
        while (cut := head.rfind("/")) > root:
            head = head[:cut]
            if head in relevant:
                return head
    return hit


def metric_names(k: int) -> tuple[str, str, str]:
    """The metrics' names (``ir_measures``' own): the keys of ``--json``'s ``metrics`` (the
    means) and ``per_query`` rows, the ``--per-query`` columns and the table's rows. One
    reading everywhere (helper leftovers73a): the table printed the mean of ``RR@k`` as
    ``MRR@k``, so a script keyed by what it showed found no such key in the JSON."""
    return (f"nDCG@{k}", f"R@{k}", f"RR@{k}")


def evaluate(
    queries: Sequence[LabelledQuery],
    rankings: Sequence[Sequence[str]],
    k: int,
    *,
    files_only: bool = False,
) -> EvalReport:
    """Score each ranking against its labels; the mean runs over every query
    (``files_only``: the rankings hold no directory, :func:`judged_uri`)."""
    try:
        import ir_measures
    except ImportError as exc:  # pragma: no cover - depends on installed extras
        raise TreehopError(
            "treehop eval needs ir-measures: pip install ir-measures "
            "(or pip install -e '.[eval]' in a treehop clone)"
        ) from exc
    names = metric_names(k)
    measures = [ir_measures.parse_measure(n) for n in names]
    qrels = [
        ir_measures.Qrel(q.qid, uri, grade) for q in queries for uri, grade in q.relevant.items()
    ]
    run = []
    for q, ranking in zip(queries, rankings, strict=True):
        judged = (judged_uri(uri, q.relevant, files_only=files_only) for uri in ranking)
        uniq = list(dict.fromkeys(judged))
        run += [
            ir_measures.ScoredDoc(q.qid, uri, float(len(uniq) - i)) for i, uri in enumerate(uniq)
        ]
    values: dict[str, dict[str, float]] = {q.qid: dict.fromkeys(names, 0.0) for q in queries}
    by_measure = {str(m): name for m, name in zip(measures, names, strict=True)}
    for metric in ir_measures.iter_calc(measures, qrels, run):
        name = by_measure[str(metric.measure)]
        values[metric.query_id][name] = float(metric.value)
    per_query = [
        {"id": q.qid, "query": q.query, "retrieved": len(r), **values[q.qid]}
        for q, r in zip(queries, rankings, strict=True)
    ]
    means = {n: sum(values[q.qid][n] for q in queries) / len(queries) for n in names}
    return EvalReport(k=k, metrics=means, per_query=per_query)
