"""``exclude`` and ``skip_suffixes`` compare names by one rule, without regard to case
(helper leftovers65b, bench/README.md "(helper leftovers65b)"; usage73's open item): a
pattern was matched case-sensitively while the suffix list compares suffixes lower-cased, so
over a tree copied from macOS or Windows ``exclude=["*.pdf"]`` kept ``MANUAL.PDF`` where
``skip_suffixes=[".pdf"]`` skipped it.

Each test fails on 6ef26e9a unless it says it is a control.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.exclude import check_exclude

from treehop_test_doubles import BagOfWordsEmbedder


def _tree(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "Build" / "deep").mkdir(parents=True)
    (root / "guide.md").write_text("# Guide\n\nRoll the deploy out slowly.\n")
    (root / "notes.TXT").write_text("Notes on the kitchen soup.\n")
    (root / "Build" / "deep" / "out.md").write_text("# Out\n\nA built page.\n")
    (root / "style.CSS").write_text("body { color: red }\n")
    return root


def _added(
    tmp_path: Path, exclude: list[str] | None = None, skip: list[str] | None = None
) -> tuple[list[str], list[str]]:
    """What a walk of :func:`_tree` left out by ``exclude`` and by the suffix list."""
    kw = {} if skip is None else {"skip_suffixes": skip}
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, **kw) as th:  # type: ignore[arg-type]
        res = th.add_resource(_tree(tmp_path), target_uri="viking://resources/t", exclude=exclude)
        return sorted(res.excluded), sorted(res.skipped_other)


def test_a_pattern_leaves_out_a_name_of_any_case(tmp_path: Path) -> None:
    excluded, _ = _added(tmp_path / "a", exclude=["*.txt", "build/"])
    assert excluded == ["Build/", "notes.TXT"]


def test_the_suffix_list_and_a_pattern_agree_on_an_upper_case_suffix(tmp_path: Path) -> None:
    # (control on the suffix side: .CSS skipped as .css before, as now)
    excluded, _ = _added(tmp_path / "a", exclude=["*.css"], skip=[])
    assert excluded == ["style.CSS"]
    _, skipped = _added(tmp_path / "b", skip=[".css"])
    assert "style.CSS" in skipped


def test_a_class_and_a_path_pattern_ignore_case() -> None:
    ex = check_exclude(["[a-c]*.md", "API/*.HTML", "./Readme"])
    assert ex.file("Chapter.md") and ex.file("x/BOOK.MD")
    assert ex.file("api/index.html") and not ex.file("v2/api/index.html")
    assert ex.file("README") and not ex.file("sub/README")
    assert not ex.file("api/v2/b.html")  # (control: '*' still never crosses '/')


_NAME = st.text(alphabet="abAB.xX-", min_size=1, max_size=8)
_PATTERN = st.lists(
    st.sampled_from(["a", "A", "b", "B", ".", "x", "X", "*", "?", "[a-b]", "[!X]"]),
    min_size=1,
    max_size=6,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(pattern=_PATTERN, folders=st.lists(_NAME, max_size=3), name=_NAME)
def test_a_name_pattern_is_fnmatch_on_the_lowered_name_at_any_depth(
    pattern: str, folders: list[str], name: str
) -> None:
    """A name pattern leaves a file out exactly when ``fnmatch`` matches the lower-cased name
    against the lower-cased pattern (ASCII), whatever the case of either or of the folders."""
    if pattern in (".", ".."):
        return  # (refused: no name is '.' or '..')
    rel = "/".join([*folders, name])
    want = fnmatch.fnmatchcase(name.lower(), pattern.lower())
    for p in (pattern, pattern.upper(), pattern.swapcase()):
        ex = check_exclude([p])
        assert ex.file(rel) == want, (p, rel)
        assert ex.file(rel.swapcase()) == want, (p, rel)
