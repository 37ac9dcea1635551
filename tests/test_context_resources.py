"""assemble_context over documents: compact resource headers that still name the source, a
chunk that does not fit delivered as an excerpt of its own text (never its heading path),
the budget a hard bound, and enough slots asked of ``find`` to fill a large budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from treehop import Treehop
from treehop.context_assembly import (
    MIN_EXCERPT_TOKENS,
    assemble_context,
    context_limit,
    default_token_counter,
)
from treehop.models import ChunkContext, ContextType, MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

ROOT = "viking://resources/docs"


def _chunk(
    doc: str, i: int, content: str, score: float, collapsed: list[ChunkContext] | None = None
) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/{doc}#chunk-{i}",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract=f"Guide › Section {i}",
        content=content,
        score=score,
        chunk_index=i,
        collapsed=collapsed or [],
    )


SENTENCES = [f"Sentence {n} says that the widget number {n} is blue and small." for n in range(40)]
LONG = " ".join(SENTENCES)


def test_compact_headers_name_the_source_once_and_sections_keep_full_uris(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hits = [
        _chunk("guide/a.md", 3, "Use the frobnicate flag to enable it.", 0.9),
        _chunk("guide/a.md", 7, "The flag is off by default.", 0.8),
        _chunk("ref/b.md", 1, "frobnicate: a boolean setting.", 0.7),
    ]
    out = assemble_context(hits, max_tokens=500)
    assert out.text == (
        "[a]\n"
        "- Use the frobnicate flag to enable it.\n"
        "- The flag is off by default.\n\n"
        "[b]\n"
        "- frobnicate: a boolean setting."
    )
    # nothing lost for a program: every section carries its full URI
    assert out.uris == [h.uri for h in hits]
    # the full-URI headers and #chunk labels cost more for the same three chunks
    monkeypatch.setattr(ca, "COMPACT_RESOURCE_HEADERS", False)
    monkeypatch.setattr(ca, "CHUNK_LABELS", True)
    old = assemble_context(hits, max_tokens=500)
    assert f"[{ROOT}/guide/a.md] (resource)" in old.text and "- #chunk-3: " in old.text
    assert out.tokens < old.tokens


def test_chunk_that_does_not_fit_is_an_excerpt_of_its_own_text() -> None:
    counter = default_token_counter()
    hit = _chunk("guide/a.md", 2, LONG, 0.9)
    assert counter.count(LONG) > 300
    out = assemble_context([hit], max_tokens=120)
    assert out.tokens <= 120
    [section] = out.sections
    assert section.excerpt and section.tier == "content" and section.uri == hit.uri
    # the start of the chunk, cut after a whole sentence, marked as cut
    assert SENTENCES[0] in out.text and out.text.endswith(". …")
    assert SENTENCES[-1] not in out.text
    # never the heading-path abstract the old fallback delivered
    assert "Guide › Section" not in out.text


def test_chunk_before_the_hit_keeps_its_end() -> None:
    before = ChunkContext(
        uri=f"{ROOT}/guide/a.md#chunk-1", chunk_index=1, score=0.5, content=LONG, position=-1
    )
    face = _chunk("guide/a.md", 2, "The answer: widgets are blue.", 0.9, [before])
    out = assemble_context([face], max_tokens=150)
    assert out.tokens <= 150
    assert "The answer: widgets are blue." in out.text
    assert [s.excerpt for s in out.sections] == [False, True]
    # the part next to the hit survives, the far start does not
    assert SENTENCES[-1] in out.text and SENTENCES[0] not in out.text
    assert "- … " in out.text


def test_no_excerpt_below_the_minimum_room() -> None:
    first = _chunk("guide/a.md", 1, "short answer here.", 0.9)
    second = _chunk("guide/a.md", 2, LONG, 0.8)
    room = (
        default_token_counter().count(assemble_context([first], max_tokens=500).text)
        + MIN_EXCERPT_TOKENS // 2
    )
    out = assemble_context([first, second], max_tokens=room)
    assert out.uris == [first.uri]
    assert (second.uri, "budget") in out.skipped


PIECE = st.text(alphabet=st.sampled_from(list("abc xyz.\n!?;:é中")), max_size=400)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(PIECE, min_size=1, max_size=8),
    positions=st.lists(st.sampled_from([None, -1, 1]), min_size=8, max_size=8),
    max_tokens=st.integers(1, 600),
)
def test_document_blocks_never_exceed_the_budget(
    texts: list[str], positions: list[int | None], max_tokens: int
) -> None:
    counter = default_token_counter()
    hits: list[MatchedContext] = []
    for i, t in enumerate(texts):
        col: list[ChunkContext] = []
        if positions[i] is not None:
            col = [
                ChunkContext(
                    uri=f"{ROOT}/d{i}.md#chunk-{i + 50}",
                    chunk_index=i + 50,
                    score=0.1,
                    content=t[::-1],
                    position=positions[i],
                )
            ]
        hits.append(_chunk(f"d{i % 3}/f{i}.md", i, t, 1.0 - i / 10, col))
    out = assemble_context(hits, max_tokens=max_tokens)
    assert counter.count(out.text) <= max_tokens
    assert out.tokens == (counter.count(out.text) if out.text else 0)
    assert len(set(out.uris)) == len(out.uris)
    for s in out.sections:
        assert s.tier == "content"  # a chunk never falls back to its heading path


def test_client_asks_find_for_enough_slots_to_fill_the_budget(tmp_path: Path) -> None:
    docs = tmp_path / "notes"
    docs.mkdir()
    for n in range(40):
        (docs / f"n{n:02d}.md").write_text(f"Widget {n} is a blue widget made in town {n}.\n")
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_resource(str(docs), target_uri="viking://resources/notes")
    assert context_limit(1000) == 10 and context_limit(3000) == 30
    big = c.assemble_context("blue widget", max_tokens=3000, target_uri="viking://resources/notes")
    assert len(big.sections) > 10
    capped = c.assemble_context(
        "blue widget", max_tokens=3000, target_uri="viking://resources/notes", limit=10
    )
    assert len(capped.sections) <= 10
    assert big.tokens <= 3000


def test_excerpts_last_keeps_lower_whole_hits(monkeypatch: pytest.MonkeyPatch) -> None:
    big = _chunk("guide/a.md", 2, LONG, 0.9)
    small = _chunk("guide/b.md", 5, "Small whole answer.", 0.5)
    at_rank = assemble_context([big, small], max_tokens=150)
    # default: the better hit is cut to the room and the lower one no longer fits
    assert at_rank.uris == [big.uri] and at_rank.sections[0].excerpt
    monkeypatch.setattr(ca, "EXCERPTS_LAST", True)
    late = assemble_context([big, small], max_tokens=150)
    assert late.uris == [small.uri, big.uri] and late.sections[1].excerpt
    assert "Small whole answer." in late.text and late.tokens <= 150


def _file(path: str, content: str, score: float, title: str = "A title line.") -> MatchedContext:
    """A whole-file leaf (a document small enough to be one leaf, not a chunk)."""
    return MatchedContext(
        uri=f"{ROOT}/{path}",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract=title,
        overview=title,
        content=content,
        score=score,
    )


def test_whole_file_leaf_that_does_not_fit_is_an_excerpt_not_its_title(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hit = _file("papers/doc-1.txt", LONG, 0.9, "On blue widgets.")
    out = assemble_context([hit], max_tokens=120)
    [section] = out.sections
    assert section.excerpt and section.tier == "content"
    assert SENTENCES[0] in out.text and SENTENCES[-1] not in out.text
    assert "On blue widgets." not in out.text and out.tokens <= 120
    # before: the file fell back to its title line, which rarely holds the answer
    monkeypatch.setattr(ca, "LEAF_EXCERPTS", False)
    old = assemble_context([hit], max_tokens=120)
    assert [s.tier for s in old.sections] == ["overview"] and SENTENCES[0] not in old.text


def test_whole_file_leaf_takes_its_title_when_no_excerpt_fits() -> None:
    first = _file("papers/doc-1.txt", "Widgets are blue.", 0.9)
    second = _file("papers/doc-2.txt", LONG, 0.8, "Small widgets.")
    # room for the title line, not for the smallest excerpt
    room = default_token_counter().count(assemble_context([first], max_tokens=500).text) + 25
    assert MIN_EXCERPT_TOKENS > 25
    out = assemble_context([first, second], max_tokens=room)
    assert out.uris == [first.uri, second.uri]
    assert out.sections[1].tier == "overview" and "Small widgets." in out.text


def test_headers_name_each_document_by_its_shortest_unambiguous_tail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hits = [
        _chunk("guide/install.md", 1, "Run the installer.", 0.9),
        _chunk("howto/install.md", 2, "Install from source.", 0.8),
        _chunk("ref/b.md", 1, "b: a setting.", 0.7),
    ]
    out = assemble_context(hits, max_tokens=500)
    assert "[guide/install]\n- Run the installer." in out.text
    assert "[howto/install]\n- Install from source." in out.text
    assert "[b]\n- b: a setting." in out.text
    assert out.uris == [h.uri for h in hits]
    monkeypatch.setattr(ca, "RESOURCE_HEADERS", "path")
    path = assemble_context(hits, max_tokens=500)
    assert "[ref/b.md]" in path.text and path.tokens > out.tokens
    monkeypatch.setattr(ca, "RESOURCE_HEADERS", "none")
    bare = assemble_context(hits, max_tokens=500)
    assert "[" not in bare.text and "(under" not in bare.text
    assert bare.text.splitlines() == [
        "- Run the installer.",
        "",
        "- Install from source.",
        "",
        "- b: a setting.",
    ]


SEGMENT = st.sampled_from(["a", "b", "faq", "x.md", "install.md"])


@given(st.lists(st.lists(SEGMENT, min_size=1, max_size=4), max_size=12), st.booleans())
def test_short_names_are_unique_tails(paths: list[list[str]], extensions: bool) -> None:
    keys = [f"{ROOT}/{'/'.join(p)}" for p in paths]
    saved = ca.HEADER_EXTENSIONS
    ca.HEADER_EXTENSIONS = extensions
    try:
        names = ca._short_names(keys)
    finally:
        ca.HEADER_EXTENSIONS = saved
    assert set(names) == set(keys)
    assert len(set(names.values())) == len(names)  # no two documents share a header
    for k, n in names.items():
        # a tail of the URI, at most its extension dropped (``x.md`` -> ``x``)
        assert k.endswith("/" + n) or (not extensions and k.endswith("/" + n + ".md"))


def test_a_documents_chunks_are_listed_in_document_order(monkeypatch: pytest.MonkeyPatch) -> None:
    around = [
        ChunkContext(
            uri=f"{ROOT}/a.md#chunk-4", chunk_index=4, score=0.4, content="Four.", position=-1
        ),
        ChunkContext(
            uri=f"{ROOT}/a.md#chunk-6", chunk_index=6, score=0.3, content="Six.", position=1
        ),
    ]
    face = _chunk("a.md", 5, "Five.", 0.9, around)
    out = assemble_context([face], max_tokens=200)
    assert out.text.endswith("- Four.\n- Five.\n- Six.")
    assert out.uris[0] == face.uri  # placed hit first; listed as written
    monkeypatch.setattr(ca, "DOCUMENT_ORDER", False)
    placed = assemble_context([face], max_tokens=200)
    assert placed.text.endswith("- Five.\n- Four.\n- Six.")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(PIECE, min_size=1, max_size=6), max_tokens=st.integers(1, 400))
def test_file_leaf_blocks_never_exceed_the_budget(texts: list[str], max_tokens: int) -> None:
    counter = default_token_counter()
    hits = [
        _file(f"d{i % 2}/f{i}.txt", t, 1.0 - i / 10, f"Title {i}.") for i, t in enumerate(texts)
    ]
    out = assemble_context(hits, max_tokens=max_tokens)
    assert counter.count(out.text) <= max_tokens
    for s in out.sections:  # whole, an excerpt of its text, or its title line
        assert (s.tier == "content") or (s.tier in ("overview", "abstract") and not s.excerpt)


class _PlainCounter:
    """The default tokenizer without ``additive_lines`` / ``spans``: every excerpt tried is
    encoded and the whole block counted at the end (the generic path)."""

    name = "plain"

    def __init__(self) -> None:
        self.inner = default_token_counter()

    def count(self, text: str) -> int:
        return self.inner.count(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(PIECE, min_size=1, max_size=6),
    positions=st.lists(st.sampled_from([None, -1, 1]), min_size=6, max_size=6),
    files=st.lists(st.booleans(), min_size=6, max_size=6),
    max_tokens=st.integers(1, 500),
)
def test_additive_counting_builds_the_same_block(
    texts: list[str], positions: list[int | None], files: list[bool], max_tokens: int
) -> None:
    # MiniLM's WordPiece splits at whitespace first: the block's count is the sum of its
    # lines' and an excerpt's pieces are counted from one encoding; same block as encoding all
    assert getattr(default_token_counter(), "additive_lines", False)
    hits: list[MatchedContext] = []
    for i, t in enumerate(texts):
        if files[i]:
            hits.append(_file(f"d{i % 2}/f{i}.txt", t + " " + LONG[: 40 * i], 1.0 - i / 10))
            continue
        col = []
        if positions[i] is not None:
            col = [
                ChunkContext(
                    uri=f"{ROOT}/d{i}.md#chunk-{i + 50}",
                    chunk_index=i + 50,
                    score=0.1,
                    content=LONG[: 60 * (i + 1)] + t,
                    position=positions[i],
                )
            ]
        hits.append(_chunk(f"d{i}.md", i, t, 1.0 - i / 10, col))
    fast = assemble_context(hits, max_tokens=max_tokens)
    plain = assemble_context(hits, max_tokens=max_tokens, token_counter=_PlainCounter())
    assert fast.text == plain.text
    assert (
        fast.tokens
        == plain.tokens
        == (default_token_counter().count(fast.text) if fast.text else 0)
    )
    assert [(s.uri, s.tokens, s.excerpt) for s in fast.sections] == [
        (s.uri, s.tokens, s.excerpt) for s in plain.sections
    ]


def _section_chunk(i: int, heading: str, text: str, score: float) -> MatchedContext:
    return _chunk("guide/a.md", i, f"{heading}\n\n{text}", score)


def test_a_heading_path_is_shown_once_for_neighbouring_chunks_of_one_section(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    head = "Guide › Installing the widget on a server"
    hits = [
        _section_chunk(3, head, "Step one: unpack the widget.", 0.9),
        _section_chunk(2, head, "Before you start, read this.", 0.8),
        _section_chunk(4, "Guide › Upgrading", "Run the upgrade tool.", 0.7),
        _section_chunk(5, "Guide › Upgrading", "Then restart it.", 0.6),
    ]
    counter = default_token_counter()
    out = assemble_context(hits, max_tokens=500)
    body = out.text.split("]\n", 1)[1]
    assert body == (
        f"- {head}\n\nBefore you start, read this.\n- Step one: unpack the widget.\n"
        "- Guide › Upgrading\n\nRun the upgrade tool.\n- Then restart it."
    )
    assert out.tokens == counter.count(out.text)
    monkeypatch.setattr(ca, "HEADINGS_ONCE", False)
    each = assemble_context(hits, max_tokens=500)
    assert each.text.count(head) == 2 and each.text.count("Guide › Upgrading") == 2
    assert out.tokens < each.tokens == counter.count(each.text)
    # the tokens saved fit one more chunk where repeating the heading leaves it out
    monkeypatch.setattr(ca, "HEADINGS_ONCE", True)
    tight = assemble_context(hits, max_tokens=out.tokens)
    assert tight.text == out.text
    monkeypatch.setattr(ca, "HEADINGS_ONCE", False)
    assert len(assemble_context(hits, max_tokens=out.tokens).sections) < len(hits)


def test_a_chunk_between_two_that_shared_a_heading_makes_the_later_show_it_again() -> None:
    head = "Guide › Installing the widget on a server"
    hits = [
        _section_chunk(2, head, "Before you start, read this.", 0.9),
        _section_chunk(4, head, "Step two: configure it.", 0.8),
        _section_chunk(3, "Guide › A note", "Widgets are blue.", 0.7),
    ]
    counter = default_token_counter()
    out = assemble_context(hits, max_tokens=500)
    assert out.text.count(head) == 2  # chunk 4 follows chunk 3 now, whose heading differs
    assert out.tokens == counter.count(out.text)
    two = assemble_context(hits[:2], max_tokens=500)
    assert two.text.count(head) == 1
    # the third chunk's cost includes the heading it makes chunk 4 show again
    assert out.sections[-1].tokens == out.tokens - two.tokens
    # a budget one token short of that leaves it out (or cuts it), never overshoots
    short = assemble_context(hits, max_tokens=out.tokens - 1)
    assert counter.count(short.text) <= out.tokens - 1
    assert short.tokens == counter.count(short.text)


HEADS = st.sampled_from(["A › B", "A › C", "Z"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chunks=st.lists(
        st.tuples(st.integers(0, 12), HEADS, PIECE, st.sampled_from([None, -1, 1])),
        min_size=1,
        max_size=8,
    ),
    max_tokens=st.integers(1, 500),
)
def test_blocks_that_show_headings_once_keep_the_budget_and_count_exactly(
    chunks: list[tuple[int, str, str, int | None]], max_tokens: int
) -> None:
    counter = default_token_counter()
    hits: list[MatchedContext] = []
    for rank, (i, head, text, pos) in enumerate(chunks):
        col = []
        if pos is not None:
            j = i + pos
            col = [
                ChunkContext(
                    uri=f"{ROOT}/guide/a.md#chunk-{j}",
                    chunk_index=j,
                    score=0.05,
                    content=f"{head}\n\n{text[::-1]}x",
                    position=pos,
                )
            ]
        hits.append(_chunk("guide/a.md", i, f"{head}\n\n{text}y", 1.0 - rank / 10, col))
    out = assemble_context(hits, max_tokens=max_tokens)
    assert out.tokens == (counter.count(out.text) if out.text else 0) <= max_tokens
    assert sum(s.tokens for s in out.sections) == out.tokens
    plain = assemble_context(hits, max_tokens=max_tokens, token_counter=_PlainCounter())
    assert counter.count(plain.text) <= max_tokens


def test_headers_leave_out_the_shared_root_and_extensions_that_tell_nothing_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hits = [
        _chunk("guide/install.md", 1, "Run the installer.", 0.9),
        _chunk("guide/install.rst", 2, "Install from source.", 0.8),
        _chunk("guide/install", 3, "Plain install notes.", 0.75),
        _chunk("ref/b.md", 1, "b: a setting.", 0.7),
        _chunk("ref/.profile", 1, "A dotfile keeps its name.", 0.6),
        _chunk("ref/v1.2", 1, "A version is not an extension.", 0.5),
    ]
    out = assemble_context(hits, max_tokens=500)
    # the prefix every document shares is not said: it tells none of them apart
    assert "(under" not in out.text and ROOT not in out.text
    # a stem two documents share keeps every extension; a unique one drops it
    for header in ("[install.md]", "[install.rst]", "[install]", "[b]", "[.profile]", "[v1.2]"):
        assert f"{header}\n" in out.text, header
    assert out.uris == [h.uri for h in hits]  # the full URIs stay in the sections
    # the old headers say the same and cost more: the root line and ``.md`` again
    monkeypatch.setattr(ca, "ROOT_LINE", True)
    monkeypatch.setattr(ca, "HEADER_EXTENSIONS", True)
    old = assemble_context(hits, max_tokens=500)
    assert old.text.startswith(f"(under {ROOT}/)\n") and "[b.md]\n" in old.text
    assert old.tokens > out.tokens
    assert old.text.split("\n", 1)[1].replace("[b.md]", "[b]") == out.text


def test_a_kept_extension_never_makes_two_headers_alike() -> None:
    # ``a.md``'s stem meets the plain ``a``, so it keeps ``.md``; ``a.md.md`` would drop one
    # ``.md`` and read ``a.md`` too: then every name keeps its extension
    assert ca._without_extensions({"1": "a.md", "2": "a.md.md", "3": "a"}) == {
        "1": "a.md",
        "2": "a.md.md",
        "3": "a",
    }
    assert ca._without_extensions({"1": "a.md", "2": "b.txt"}) == {"1": "a", "2": "b"}


def test_the_freed_tokens_fit_another_whole_document(monkeypatch: pytest.MonkeyPatch) -> None:
    # short abstracts, one file each (Cranfield's shape): a header per document is overhead
    hits = [
        _file(f"papers/doc-{i}.txt", f"Paper {i} finds that widgets are blue.", 1 - i / 10)
        for i in range(3)
    ]
    lean = assemble_context(hits, max_tokens=500)
    assert [s.excerpt for s in lean.sections] == [False, False, False]
    assert default_token_counter().count(lean.text) == lean.tokens
    # at exactly the lean block's size the old headers leave the third paper out or cut it
    monkeypatch.setattr(ca, "ROOT_LINE", True)
    monkeypatch.setattr(ca, "HEADER_EXTENSIONS", True)
    old = assemble_context(hits, max_tokens=lean.tokens)
    assert "Paper 2 finds that widgets are blue." not in old.text
