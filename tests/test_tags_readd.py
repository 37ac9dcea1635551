"""Directory tags on an incremental re-add (``treehop.tagging.ingest``): the batched
aggregation ranks exactly as :meth:`KeywordTagger.aggregate` does, and the directories a
re-add re-describes carry the tags their children give them."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import tags as tagmod
from treehop.models import Node
from treehop.tagging.ingest import _own_text, _stored_auto_labels, aggregate_many
from treehop.tagging.keywords import KeywordTagger

_LABEL = st.sampled_from(
    ["alpha", "beta", "gamma", "delta", "kafka", "feature-store", "c++", "zeta", "unknown-x", "z"]
)
_CORPUS = ["alpha beta kafka", "alpha gamma", "alpha delta zeta", "beta", "feature store kafka"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.lists(_LABEL, max_size=5), max_size=6),
            st.lists(_LABEL, max_size=3),
        ),
        max_size=5,
    ),
    st.integers(0, 9),
    st.booleans(),
)
def test_aggregate_many_equals_one_aggregate_per_directory(
    dirs: list[tuple[list[list[str]], list[str]]], limit: int, fitted: bool
) -> None:
    tagger = KeywordTagger(min_df=1, max_dir_tags=limit)
    if fitted:
        tagger.fit(_CORPUS)
    got = aggregate_many(tagger, [kids for kids, _ in dirs], [own for _, own in dirs])
    # Repeats within a child count once (aggregate_labels takes distinct labels per child).
    want = [
        tagger.aggregate_labels([list(dict.fromkeys(k)) for k in kids], own) for kids, own in dirs
    ]
    assert got == want
    # ... which is the aggregation of the children's tags themselves.
    assert want == [
        tagger.aggregate([[f"auto:{lab}" for lab in k] for k in kids], own) for kids, own in dirs
    ]


_STORED_LABELS = ["kafka", "Tensor Flow", "c++", "feature-store", "Beta", "b", "-x", "x-"]
_STORED_LABELS += ["Tensor\nFlow", "a" * 64, "k8s\n", "Ünï"]


class _Kid:
    def __init__(self, uri: str, tags: list[str]) -> None:
        self.uri, self.tags = uri, tags


class _Store:
    def __init__(self, kids: list[_Kid]) -> None:
        self.kids = kids

    def children(self, uri: str) -> list[_Kid]:
        return self.kids


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(
            st.builds(
                lambda src, lab: f"{src}{lab}",
                st.sampled_from(["auto:", "auto: ", "user:", "inherit:", "AUTO:"]),
                st.sampled_from(_STORED_LABELS),
            ),
            max_size=5,
        ),
        max_size=6,
    ),
    st.lists(st.integers(0, 5), max_size=3),
)
def test_stored_labels_are_the_parsed_auto_labels(tags: list[list[str]], fresh: list[int]) -> None:
    """The fast path (tags already normal) and the parsed path give what parsing every tag
    gives; children the batch rewrites are left out."""
    kids = [_Kid(f"viking://r/d/{i}", t) for i, t in enumerate(tags)]
    rewritten = {f"viking://r/d/{i}": None for i in fresh}
    got = _stored_auto_labels(_Store(kids), "viking://r/d", rewritten)  # type: ignore[arg-type]
    want = []
    for k in kids:
        if k.uri in rewritten:
            continue
        auto = [t for t in k.tags if t.startswith("auto:")]
        if auto:
            want.append([tagmod.label_of(tagmod.parse_tag(t)) for t in auto])
    assert got == want


def _tree(root: Path) -> None:
    """Three folders of six notes (two in a subfolder); each note draws seven words of its
    folder's twenty, so words are shared by a few notes (keywords), not by all (generic)."""
    rng = random.Random(7)
    for topic in ("streams", "models", "infra"):
        pool = [f"{topic[:3]}{w}" for w in ("ka", "lo", "mi", "nu", "pe", "ri", "so", "tu")]
        pool += [f"{a}{b}" for a in ("bra", "cle", "dro", "fli") for b in ("x", "z", "q")]
        for i in range(6):
            words = rng.sample(pool, 7)
            body = f"# Note {i}\n\n" + " ".join(words + words[:3]) + ".\n"
            sub = f"{topic}/deep" if i >= 4 else topic
            (root / sub).mkdir(parents=True, exist_ok=True)
            (root / sub / f"n{i}.md").write_text(body, encoding="utf-8")
    old = 120 * 10**9
    for p in root.rglob("*"):
        st_ = p.stat()
        os.utime(p, ns=(st_.st_atime_ns, st_.st_mtime_ns - old))


def _dir_tags_from_children(th: Treehop, tagger: KeywordTagger, d: Node) -> list[str]:
    """A directory's ``auto:`` tags as the per-directory aggregation makes them from what is
    stored under it now (its own words' keywords, then its children's)."""
    kids = th.store.children(d.uri)
    own_text = _own_text(d, [k.uri for k in kids])
    own = tagger.extract(own_text) if own_text else []
    return [f"auto:{x}" for x in tagger.aggregate([k.tags for k in kids], own)]


def test_readd_describes_directories_from_their_stored_and_new_children(
    bow: Any, tmp_path: Path
) -> None:
    """A change, an addition and a removal in three folders: every directory the re-add
    re-describes has the tags its children now give it (the removed file's labels gone, the
    new and changed files' in), computed with the same statistics the re-add used."""
    root = tmp_path / "kb"
    _tree(root)
    # retag_all_below=0: no whole-index retag at the end of a small write, so the tags checked
    # are the ones the incremental path computed.
    with Treehop(embedder=bow, tagger="auto", retag_all_below=0) as th:
        th.add_resource(root, target_uri="viking://resources")
        (root / "streams" / "n1.md").write_text(
            "# Note 1\n\nregistry avro schema registry avro compatibility.\n"
        )
        (root / "models" / "deep" / "n5.md").unlink()
        (root / "infra" / "deep" / "n9.md").write_text(
            "# Note 9\n\nterraform registry avro modules terraform registry avro.\n"
        )
        res = th.add_resource(root, target_uri="viking://resources")
        assert (res.read, res.deleted) == (2, 1)
        tagger = th._async.writer.tagger._get(th.store)  # type: ignore[union-attr]
        redescribed = [
            "viking://resources/kb",
            "viking://resources/kb/streams",
            "viking://resources/kb/models",
            "viking://resources/kb/models/deep",
            "viking://resources/kb/infra",
            "viking://resources/kb/infra/deep",
        ]
        for uri in redescribed:
            d = th.store.get([uri])[0]
            assert d is not None
            auto = [t for t in d.tags if t.startswith("auto:")]
            assert auto == _dir_tags_from_children(th, tagger, d), uri
        # The new and the changed note share new words (a keyword now), and the new note's
        # folder picks it up from it.
        for uri in ("kb/streams/n1.md", "kb/infra/deep/n9.md", "kb/infra/deep"):
            d = th.store.get([f"viking://resources/{uri}"])[0]
            assert d is not None
            assert "auto:registry-avro" in d.tags, (uri, d.tags)
