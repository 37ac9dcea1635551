"""Attacks on stop 64's surface (helper attacks76): ``exclude=`` patterns, ``skip_suffixes``,
the numbers ``validation.integral`` / ``real`` take, ``PartialWriteError``, the MCP line
gate's answers and the CLI's typed option values. Each test names what it broke before."""

from __future__ import annotations

import copy
import fnmatch
import numbers
import pickle
import time
import warnings
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import main
from treehop.errors import InvalidQueryError, PartialWriteError
from treehop.ingest.exclude import check_exclude
from treehop.ingest.loaders import check_skip_suffixes, scan_columns
from treehop.mcp_server import _refusal
from treehop.redaction import register_secret
from treehop.validation import check_dense_weight, check_limit, check_threshold

# --- exclude: time on a deep path ----------------------------------------------------------

_DEEP = "/".join(["a" * 255] * 250)  # (a walk reaches 250 folders of 255-character names)


@pytest.mark.parametrize(
    "unit",
    ["?", "[a]"],
    ids=["question-marks", "classes"],
)
def test_hostile_patterns_on_a_deep_path_are_matched_quickly(unit: str) -> None:
    """256 patterns ``*`` + 120 single-character units + ``b``: each ``*`` was retried after
    every ``/`` of the path and at every character of a name, the fixed units tried after
    each: 6 s (``?``) and 34 s (``[a]``) for one path; the walk asks once per file and
    folder. Now a name-only pattern reads the last name, the last ``*`` is possessive."""
    ex = check_exclude([f"*{unit * 120}b{i}" for i in range(256)])
    t0 = time.perf_counter()
    for _ in range(2):
        assert not ex.file(_DEEP)
        assert not ex.folder(_DEEP)
    assert time.perf_counter() - t0 < 1.0


def test_two_globstars_with_a_hostile_middle_are_matched_quickly() -> None:
    """``**/X/**/Y``: every pair of depths was tried (250 x 250), each trying ``Y``'s units
    at every character; the first ``**`` now takes the first depth ``X`` fits."""
    middle = "*" + "?" * 100 + "*"
    ex = check_exclude([f"**/{middle}/**/*{'?' * 200}b{i}" for i in range(64)])
    deep = "/".join(["a" * 200] * 60)
    t0 = time.perf_counter()
    for _ in range(5):
        assert not ex.file(deep)
    assert time.perf_counter() - t0 < 1.0


def test_a_long_tail_after_the_last_globstar_is_matched_quickly() -> None:
    """``**/*/*/.../x``: the ``**`` tried the 120-name tail at every depth of the path, each
    try reading up to 120 names (12 s for 256 such patterns on one 250-folder path); the
    path is now cut before its last names, once."""
    ex = check_exclude([("**/" + "/".join(["*"] * 120) + f"/x{i}")[:512] for i in range(256)])
    t0 = time.perf_counter()
    assert not ex.file(_DEEP) and not ex.folder(_DEEP)
    assert time.perf_counter() - t0 < 1.0
    assert ex.file("/".join(["a"] * 130) + "/x7")  # (control: a path it matches)


def test_names_between_two_globstars_are_bounded_for_the_whole_call() -> None:
    """``**/*/*/...(120)/x/**``: the first ``**`` tries the 120 names at every depth, each try
    reading up to all of them: 256 such patterns took 10 s (12.8 s on 6ef26e9a) on one
    250-folder path. Now at most 64 such names in all, refused before anything is read."""
    with pytest.raises(InvalidQueryError, match="64 names between two"):
        check_exclude([("**/" + "/".join(["*"] * 120) + f"/x{i}/**")[:512] for i in range(256)])
    with pytest.raises(InvalidQueryError, match="64 names between two"):
        check_exclude([f"**/a{i}/b/**" for i in range(33)])  # (66 in all)
    ex = check_exclude([f"**/a{i}/b/**" for i in range(32)])  # (64: taken)
    assert ex.file("x/a3/b/c.md") and not ex.file("x/a3/c/b.md")
    hostile = check_exclude([("**/" + "/".join(["*"] * 63) + "/x/**")])
    t0 = time.perf_counter()
    assert not hostile.file(_DEEP) and not hostile.folder(_DEEP)
    assert time.perf_counter() - t0 < 1.0


# --- exclude: the same answers as glob's rules ---------------------------------------------


def _reference(pattern: str, rel: str) -> bool:
    """The documented rules, written the slow, obvious way: fnmatch per name, ``**`` any
    number of folders (as the last segment: one name or more), a name alone at any depth."""
    anchored = pattern.startswith("./")
    body = pattern[2:] if anchored else pattern
    body = body.rstrip("/") if body.endswith("/") else body
    segs = body.split("/")
    parts = rel.split("/")
    if not anchored and len(segs) == 1:
        return fnmatch.fnmatchcase(parts[-1], segs[0])

    def walk(s: list[str], p: list[str]) -> bool:
        if not s:
            return not p
        if s[0] == "**":
            if len(s) == 1:
                return bool(p)
            return any(walk(s[1:], p[i:]) for i in range(len(p) + 1))
        return bool(p) and fnmatch.fnmatchcase(p[0], s[0]) and walk(s[1:], p[1:])

    return walk(segs, parts)


_SEG = st.sampled_from(["*", "**", "a", "b", "?", "a*", "*b", "[ab]", "[!a]", "a?b", "*a*b"])
_NAME = st.text(alphabet="ab-!.", min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(
    segs=st.lists(_SEG, min_size=1, max_size=5),
    top=st.booleans(),
    rel=st.lists(_NAME, min_size=1, max_size=6).map("/".join),
)
def test_a_pattern_matches_as_the_documented_rules_say(
    segs: list[str], top: bool, rel: str
) -> None:
    """The rewritten translation (names matched on the last name, possessive last ``*``,
    the first of two ``**`` atomic) answers as fnmatch on each name does."""
    pattern = ("./" if top else "") + "/".join(segs)
    try:
        ex = check_exclude([pattern])
    except InvalidQueryError:
        return  # (three '**' and the like: refused, as documented)
    if any(s == "." or s == ".." for s in rel.split("/")):
        return
    assert ex.file(rel) == _reference(pattern, rel), (pattern, rel)
    assert ex.folder(rel) == _reference(pattern, rel), (pattern, rel)


def test_a_range_written_with_two_hyphens_is_refused_not_warned() -> None:
    """``[a--b]`` reached ``re.compile`` as ``[a--b]``: a FutureWarning ("possible set
    difference"), a raw exception where warnings are errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidQueryError, match="not a valid glob"):
            check_exclude(["[a--b]"])
        assert check_exclude(["[a-b-c]"]).file("x/-")  # (a '-' after a range is itself)


class _RaisingList(list[str]):
    def __iter__(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("a caller's own list")


class _ShiftingList(list[object]):
    """Answers a good pattern the first time it is read, others after."""

    def __init__(self) -> None:
        super().__init__(["ok.html"])
        self.reads = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.reads += 1
        return iter(["ok.html"] if self.reads == 1 else [b"x", 3])


class _LyingStr(str):
    def startswith(self, *a: object) -> bool:  # type: ignore[override]
        return False

    def split(self, *a: object) -> list[str]:  # type: ignore[override]
        return ["ok"]


def test_a_list_subclass_is_read_once_and_its_failure_is_typed() -> None:
    with pytest.raises(InvalidQueryError, match="could not be read"):
        check_exclude(_RaisingList(["x"]))
    shifting = _ShiftingList()
    assert check_exclude(shifting).patterns == ("ok.html",)  # (was (b'x', 3))
    with pytest.raises(InvalidQueryError, match="absolute"):
        check_exclude([_LyingStr("/etc/../x")])  # (was taken, its own split answering)


def test_skip_suffixes_reads_a_callers_list_once_and_as_text() -> None:
    with pytest.raises(InvalidQueryError, match="could not be read"):
        check_skip_suffixes(_RaisingList([".css"]))

    class Lying(str):
        def isascii(self) -> bool:
            return True

        def lower(self) -> str:
            return "/"

    with pytest.raises(InvalidQueryError, match="not a file suffix"):
        check_skip_suffixes([Lying(".c/s")])
    assert check_skip_suffixes([Lying(".CSS")]) == frozenset({".css"})


def test_a_walk_with_hostile_patterns_still_leaves_out_what_they_match(tmp_path: Path) -> None:
    """The rewrite on a real tree: a name pattern deep down, a ``**`` pair, a folder."""
    for rel in ["a/b/c/skip.html", "a/b/c/keep.md", "x/_build/y/z.md", "x/y.md", "d/e.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("text\n")
    ex = check_exclude(["skip.html", "**/_build/**", "./d/"])
    found, report = scan_columns(tmp_path, exclude=ex)
    assert sorted(found.rels) == ["a/b/c/keep.md", "x/y.md"]
    assert sorted(report.excluded) == ["a/b/c/skip.html", "d/", "x/_build/y/"]


def test_a_registered_key_given_as_a_pattern_or_suffix_is_not_echoed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``exclude`` / ``skip_suffixes`` / ``--exclude`` echoed a refused value's first 60 / 40
    characters unredacted: a key pasted in the wrong place reached the error and stderr."""
    key = "sk-attacks76-0123456789abcdefghijklmnopqrstuv"
    register_secret(key)
    for bad in ([f"{key}\\x"], [f"/{key}"], [f"{key}/../x"]):
        with pytest.raises(InvalidQueryError) as ei:
            check_exclude(bad)
        assert key[:12] not in str(ei.value) and "***" in str(ei.value)
    with pytest.raises(InvalidQueryError) as ei:
        check_skip_suffixes([f".{key[:30]}/"])
    assert key[3:25] not in str(ei.value)
    src = tmp_path / "src"
    src.mkdir()
    code = main(["--index", str(tmp_path / "idx"), "index", str(src), "--exclude", f"/{key}"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--exclude" in err and key[:12] not in err
    assert not (tmp_path / "idx").exists()


# --- numbers ---------------------------------------------------------------------------


class _RegisteredInt:
    """Registered as an ``Integral`` whose conversion fails (a wrapper over a remote value)."""

    def __int__(self) -> int:
        raise RuntimeError("no value")

    def __repr__(self) -> str:
        return "_RegisteredInt()"


numbers.Integral.register(_RegisteredInt)


class _FailingInt(int):
    def __int__(self) -> int:
        raise RuntimeError("no value")

    def __index__(self) -> int:
        raise RuntimeError("no value")


class _RegisteredReal:
    def __float__(self) -> float:
        raise RuntimeError("no value")

    def __repr__(self) -> str:
        return "_RegisteredReal()"


numbers.Real.register(_RegisteredReal)


def test_a_fraction_past_a_floats_range_is_refused_not_an_overflow(bow) -> None:
    """``real`` takes a ``Fraction`` (``numbers.Real``); ``float(Fraction(10**400))`` raised
    a raw OverflowError out of ``find`` and ``check_dense_weight``."""
    huge = Fraction(10**400, 3)
    with pytest.raises(InvalidQueryError, match="out of range"):
        check_threshold(huge)  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="out of range"):
        check_threshold(-huge)  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="dense_weight"):
        check_dense_weight(huge)  # type: ignore[arg-type]
    assert check_dense_weight(Fraction(1, 2)) == 0.5  # (control)
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource("Caching keeps answers near.", name="cache.md")
        with pytest.raises(InvalidQueryError, match="score_threshold"):
            th.find("caching", score_threshold=huge)  # type: ignore[arg-type]
        with pytest.raises(InvalidQueryError, match="limit"):
            th.find("caching", limit=_RegisteredInt())  # type: ignore[arg-type]
        assert th.find("caching", limit=Fraction(2, 1).numerator).resources  # (control)


@pytest.mark.parametrize(
    "value", [_RegisteredInt(), _FailingInt(3)], ids=["registered", "int-subclass"]
)
def test_an_integer_whose_conversion_fails_is_refused(value: object) -> None:
    """``int(value)`` raised the value's own RuntimeError out of ``limit`` / ``depth``."""
    with pytest.raises(InvalidQueryError, match="must be an integer"):
        check_limit(value)


def test_a_real_whose_conversion_fails_is_refused() -> None:
    with pytest.raises(InvalidQueryError, match="must be a number"):
        check_threshold(_RegisteredReal())  # type: ignore[arg-type]


# --- PartialWriteError -------------------------------------------------------------------


def test_a_partial_write_error_pickles_and_copies_with_its_lists() -> None:
    """Its ``__init__`` takes four arguments, ``args`` holds one: ``pickle.loads`` and
    ``copy.copy`` raised a raw TypeError, so a worker process's error never reached its
    parent (``concurrent.futures`` answers BrokenProcessPool)."""
    exc = PartialWriteError("store down; 2 node(s) ...", ("viking://a", "viking://b"), (), True)
    for twin in (pickle.loads(pickle.dumps(exc)), copy.copy(exc), copy.deepcopy(exc)):
        assert type(twin) is PartialWriteError
        assert str(twin) == str(exc)
        assert twin.written == ("viking://a", "viking://b")
        assert twin.deleted == () and twin.discarded is True


def test_a_partial_write_error_does_not_claim_a_rollback_that_failed(tmp_path: Path) -> None:
    """The error is made where the store fails, before the writer calls the store's
    ``discard_unsaved``: when that call raised too, it still said "dropped through the
    store's discard_unsaved" (``discarded=True``) over six nodes the store kept."""
    from test_leftovers64b import _EngineWithRollback, _failing_midway, _folder

    class RollbackDown(_EngineWithRollback):  # type: ignore[misc,valid-type]
        def discard_unsaved(self) -> bool:
            raise RuntimeError("rollback down too")

    store = RollbackDown()
    th, before = _failing_midway(store, tmp_path)
    with pytest.raises(PartialWriteError) as ei:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    kept = set(store._nodes) - before
    assert kept and set(ei.value.written) == kept
    assert not ei.value.discarded
    assert "dropped" not in str(ei.value).replace("dropped nothing", "")
    assert str(ei.value).endswith("check or remove them, or add the same input again")
    assert len(str(ei.value)) <= 500


# --- MCP -----------------------------------------------------------------------------------


def test_a_number_the_sdk_cannot_read_is_not_called_nesting() -> None:
    """A request holding a 5,000-digit number with a fraction is JSON Python reads and the
    SDK's parser does not: answered "nested deeper than the server reads (200 levels)"."""
    line = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":%s.5}}' % ("1" * 5000)
    answer = _refusal(line)
    assert answer is not None
    assert answer.id == 7 and answer.error.code == -32600
    assert "number past its range" in answer.error.message
    deep = '{"jsonrpc":"2.0","id":8,"method":"ping","params":' + "[" * 300 + "]" * 300 + "}"
    answer = _refusal(deep)  # (control: the nesting case keeps its words)
    assert answer is not None and answer.id == 8 and "nested deeper" in answer.error.message


# --- CLI -----------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--text-chars", "--threshold"], ids=["text-chars", "thr"])
def test_a_huge_option_value_is_not_echoed_whole(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--text-chars`` / ``--threshold`` of 100,000 digits (``int`` refuses past 4,300,
    ``float`` reads inf) echoed all of it to stderr (``--threshold``'s raw, unescaped)."""
    value = "9" * 100_000
    args = ["--index", str(tmp_path / "idx"), "find", "q", option, value]
    if option == "--text-chars":
        args.insert(4, "--text")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert option in err and len(err) < 2_000, len(err)
