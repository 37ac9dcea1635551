"""``exclude`` ignores case in every form of pattern its matcher builds.

Two stop-65 changes meet here: helper attacks76 rewrote the matcher (a pattern with two names
or more after its last ``**`` is matched as a head and a tail, apart), and helper
leftovers65b made ``exclude`` ignore case as ``skip_suffixes`` does. A case rule applied to
one expression and not to the other forms would leave ``**/API/*.HTML`` keeping
``docs/api/x.html``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest.exclude import check_exclude


def test_every_form_of_pattern_ignores_case() -> None:
    cases = {
        "*.HTML": "a/b/x.html",  # a name at any depth
        "Docs/*.HTML": "docs/x.html",  # a path from the top
        "**/API/*.HTML": "docs/v1/api/x.html",  # two names after the last '**' (split)
        "**/Build/**/OUT/*.Txt": "a/build/c/out/x.txt",  # two '**'
        "./INDEX.html": "index.html",  # a name anchored to the top
    }
    for pattern, rel in cases.items():
        ex = check_exclude([pattern])
        assert ex.file(rel), pattern
        assert ex.file(rel.upper()), pattern
    assert check_exclude(["**/API/"]).folder("docs/Api")  # (folders only, split or not)
    assert not check_exclude(["**/API/*.HTML"]).file("docs/apx/x.html")


_NAME = st.text(alphabet="aBcD.", min_size=1, max_size=4).filter(lambda s: s not in {".", ".."})
_SEG = st.one_of(_NAME, st.just("*"), st.just("?b"), st.just("[a-c]*"))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_SEG, st.just("**")), min_size=1, max_size=5),
    st.lists(_NAME, min_size=1, max_size=6),
)
def test_a_pattern_and_its_swapped_case_leave_out_the_same_paths(
    segs: list[str], names: list[str]
) -> None:
    """Property: swapping the case of a pattern (or of the path) never changes the answer."""
    pattern = "/".join(segs)
    if segs.count("**") + (0 if len(segs) > 1 else 1) > 2:
        return  # (more '**' than a pattern may hold: refused, not matched)
    rel = "/".join(names)
    a, b = check_exclude([pattern]), check_exclude([pattern.swapcase()])
    assert a.file(rel) == b.file(rel) == a.file(rel.swapcase())
    assert a.folder(rel) == b.folder(rel) == a.folder(rel.swapcase())
