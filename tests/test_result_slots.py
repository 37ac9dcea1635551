"""Result slots that never hide the answer (issue 33, item 3): for a question over documents,
one slot per passage (a section or answer, cut by size), not per document; a slot holds only
what its text shows; ``assemble_context`` delivers it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from treehop import RetrievalConfig, Treehop
from treehop.context_assembly import assemble_context
from treehop.descent import Candidate, Score, passage_groups, same_passage
from treehop.models import ContextType, FoundBy, Node

from treehop_test_doubles import chunk_candidate

R = "viking://resources"
DOC = f"{R}/docs/guide.md"


def _chunk(i: int, own: float, final: float, path: list[str], start: int | None) -> Candidate:
    meta: dict[str, Any] = {"heading_path": path}
    if start is not None:
        meta["passage_start"] = start
    return chunk_candidate(DOC, i, own, final, **meta)


def _file(uri: str, score: float) -> Candidate:
    node = Node(
        uri=uri,
        parent_uri=f"{R}/docs",
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        content=uri,
    )
    return Candidate(node, Score(score), Score(score), score, FoundBy.GLOBAL)


def _uris(groups: list[list[Candidate]]) -> list[list[str]]:
    return [[c.uri.rsplit("/", 1)[-1] for c in g] for g in groups]


def test_passage_start_decides_which_chunks_share_a_slot() -> None:
    a = ["Guide", "A"]
    b = ["Guide", "B"]
    items = [
        _chunk(0, 0.9, 0.9, a, 0),
        _file(f"{R}/docs/other.md", 0.8),
        _chunk(3, 0.7, 0.7, b, 3),  # another section: a slot of its own
        _chunk(1, 0.6, 0.6, a, 0),  # continues chunk 0's section: same slot
        _chunk(4, 0.5, 0.5, b, 3),
        _chunk(6, 0.4, 0.4, b, 6),  # same heading path, another answer (passage 6)
    ]
    assert _uris(passage_groups(items, 2000)) == [
        ["guide.md#chunk-0", "guide.md#chunk-1"],
        ["other.md"],
        ["guide.md#chunk-3", "guide.md#chunk-4"],
        ["guide.md#chunk-6"],
    ]


def test_without_passage_starts_adjacent_chunks_of_one_section_share_a_slot() -> None:
    a, b = ["Guide", "A"], ["Guide", "B"]
    assert same_passage(_chunk(2, 0, 0, a, None), _chunk(3, 0, 0, a, None))
    assert not same_passage(_chunk(2, 0, 0, a, None), _chunk(4, 0, 0, a, None))  # a gap
    assert not same_passage(_chunk(3, 0, 0, a, None), _chunk(4, 0, 0, b, None))  # a new section
    # a recorded start wins over adjacency (an index with it written at ingest)
    assert not same_passage(_chunk(2, 0, 0, a, 2), _chunk(3, 0, 0, a, 3))
    assert same_passage(_chunk(2, 0, 0, a, 1), _chunk(4, 0, 0, a, 1))


def test_a_run_of_one_passage_is_one_slot_whatever_order_its_chunks_rank_in() -> None:
    a = ["Guide", "A"]
    items = [_chunk(5, 0.9, 0.9, a, None), _chunk(3, 0.8, 0.8, a, None)]
    items.append(_chunk(4, 0.7, 0.7, a, None))  # bridges 3 and 5: one run
    groups = passage_groups(items, 2000)
    assert [[c.chunk_index for c in g] for g in groups] == [[5, 3, 4]]  # best first


def test_a_slot_holds_only_what_it_shows() -> None:
    """A slot is a contiguous run of its passage within the text budget: a chunk of the
    same passage that is not next to it, or that would not fit, takes a slot of its own
    (it would otherwise be hidden behind the slot's face)."""
    a = ["Guide", "A"]
    size = len(_chunk(0, 0, 0, a, 0).node.content)  # every test chunk has this length
    items = [_chunk(i, 1 - i / 10, 1 - i / 10, a, 0) for i in (0, 1, 2, 4)]
    assert _uris(passage_groups(items, 3 * size + 4)) == [
        ["guide.md#chunk-0", "guide.md#chunk-1", "guide.md#chunk-2"],
        ["guide.md#chunk-4"],  # a gap: not shown, so its own slot
    ]
    assert _uris(passage_groups(items, 2 * size + 2)) == [
        ["guide.md#chunk-0", "guide.md#chunk-1"],
        ["guide.md#chunk-2"],  # would not fit the slot's text
        ["guide.md#chunk-4"],
    ]
    assert len(passage_groups(items, 0)) == 4  # the face alone: one chunk per slot


def _guide(tmp: Path) -> Path:
    root = tmp / "docs"
    root.mkdir()
    oauth = "\n\n".join(f"oauth token scopes refresh detail {i}. " * 8 for i in range(3))
    deploy = "\n\n".join(f"kubernetes rollout readiness probes {i}. " * 8 for i in range(3))
    (root / "guide.md").write_text(f"# Guide\n\n## Tokens\n\n{oauth}\n\n## Deploying\n\n{deploy}")
    (root / "notes.md").write_text("unrelated gardening notes about tomatoes")
    return root


def test_each_section_of_a_document_takes_its_own_slot_for_a_question(bow, tmp_path: Path) -> None:
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_guide(tmp_path), target_uri=f"{R}/docs")
        # a keyword query names a page: one slot per document, as before (where the
        # documents found fill the limit: two here, so the rule that fills it is off)
        th.config.few_document_passages = False
        res = th.find("oauth token scopes kubernetes readiness probes", limit=5)
        docs = [m.parent_uri or m.uri for m in res.resources]
        assert len(docs) == len(set(docs))
        # a question asks for an answer: one slot per passage
        res = th.find("How do oauth token scopes and kubernetes readiness probes work?", limit=5)
        guide = [m for m in res.resources if m.parent_uri == f"{R}/docs/guide.md"]
        paths = [tuple(m.metadata["heading_path"]) for m in guide]
        assert ("Guide", "Tokens") in paths and ("Guide", "Deploying") in paths
        assert len(paths) == len(set(paths)), "one slot per section"
        for m in guide:  # a slot holds chunks of its own section only
            sections = {m.metadata["passage_start"]}
            own = {c.uri for c in m.collapsed}
            for other in guide:
                if other is not m:
                    assert other.uri not in own
            assert len(sections) == 1
        scores = [m.score for m in res.resources]
        assert scores == sorted(scores, reverse=True)


def _body(content: str) -> str:
    """A chunk's text without the heading line it leads with (a slot says it once)."""
    return content.split("\n\n", 1)[-1]


def test_the_slot_shows_its_passage_in_document_order(bow, tmp_path: Path) -> None:
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_guide(tmp_path), target_uri=f"{R}/docs")
        res = th.find("oauth token scopes refresh", limit=3)
        top = res.resources[0]
        assert top.metadata["heading_path"] == ["Guide", "Tokens"]
        shown = [c for c in top.collapsed if c.position is not None]
        assert shown, "the section's other chunks are in the slot and shown"
        for c in shown:
            assert c.position == (c.chunk_index or 0) - (top.chunk_index or 0)
            assert _body(c.content) in top.slot_text
        # the heading line once, at the top (ingest74: it was said once per chunk)
        assert top.slot_text.count("Guide › Tokens\n\n") == 1
        # document order: each shown chunk's text appears where its index says
        pieces = sorted([*shown], key=lambda c: c.position or 0)
        at = [top.slot_text.index(_body(c.content)) for c in pieces]
        assert at == sorted(at)
        assert len(top.slot_text) <= RetrievalConfig().document_context_chars
        # the block assemble_context builds carries the passage too
        block = assemble_context(res, max_tokens=2000)
        for c in shown:
            assert c.content.split("\n\n")[-1][:40] in block.text
        th.config.document_context_chars = 0
        alone = th.find("oauth token scopes refresh", limit=3).resources[0]
        assert alone.slot_text == alone.content
        assert all(c.position is None for c in alone.collapsed)


def test_a_question_slot_shows_more_of_its_passage_than_a_document_slot(
    bow, tmp_path: Path
) -> None:
    """``question_context_chars`` (3,000) for a question's passage slot, while a keyword
    query's document slot keeps ``document_context_chars`` (2,000); each stays within its
    own section."""
    root = tmp_path / "docs"
    root.mkdir()
    long = "\n\n".join(f"oauth token scopes refresh rotation detail {i}. " * 5 for i in range(16))
    other = "\n\n".join(f"kubernetes rollout readiness probes {i}. " * 6 for i in range(6))
    (root / "guide.md").write_text(f"# Guide\n\n## Tokens\n\n{long}\n\n## Deploying\n\n{other}")
    question = "How does oauth token scopes refresh rotation work?"
    keywords = "oauth token scopes refresh rotation"
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(root, target_uri=f"{R}/docs")
        cfg = th.config
        assert cfg.question_context_chars == 3000 and cfg.document_context_chars == 2000
        q_top = th.find(question, limit=3).resources[0]
        k_top = th.find(keywords, limit=3).resources[0]
        assert 2000 < len(q_top.slot_text) <= 3000
        assert len(k_top.slot_text) <= 2000
        assert "kubernetes" not in q_top.slot_text  # the passage ends at its section
        # every chunk the question slot shows is in its text, in document order
        shown = sorted(
            (c for c in q_top.collapsed if c.position is not None), key=lambda c: c.position or 0
        )
        at = [q_top.slot_text.index(_body(c.content)) for c in shown]
        assert len(shown) >= 3 and at == sorted(at)
        cfg.question_context_chars = None  # the document slot's extent for questions too
        assert len(th.find(question, limit=3).resources[0].slot_text) <= 2000
        cfg.question_context_chars = 0  # the face alone
        face = th.find(question, limit=3).resources[0]
        assert face.slot_text == face.content


def test_a_sentence_takes_passage_slots_and_keeps_its_weights(bow, tmp_path: Path) -> None:
    """A problem report written as a sentence ("... doesn't work.") asks for one answer of a
    page, as a question does: each section takes its own slot, so the one that matched is
    shown, not hidden behind another; the same words without the stop (a heading) keep one
    slot per document, and ``sentence_passages=False`` restores that for the sentence."""
    report = "Oauth token scopes and kubernetes readiness probes stopped working."
    heading = "Oauth token scopes and kubernetes readiness probes stopped working"
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_guide(tmp_path), target_uri=f"{R}/docs")
        # "stopped working" is also a problem report without the stop
        # (problem_report_passages, tests/test_query_shape_reports.py): off here
        th.config.problem_report_passages = False
        th.config.few_document_passages = False  # (two documents: a heading fills 5 otherwise)

        def sections(query: str) -> list[tuple[str, ...]]:
            res = th.find(query, limit=5)
            return [
                tuple(m.metadata["heading_path"])
                for m in res.resources
                if m.parent_uri == f"{R}/docs/guide.md"
            ]

        got = sections(report)
        assert ("Guide", "Tokens") in got and ("Guide", "Deploying") in got
        assert len(got) == len(set(got)), "one slot per section"
        assert len(sections(heading)) == 1  # a heading names the page: one slot
        th.config.sentence_passages = False
        assert len(sections(report)) == 1


def test_a_slot_joins_the_neighbouring_passage_that_holds_the_documents_next_hit() -> None:
    """``join_adjacent``: a passage mark with no heading change (the chunker's guess from
    blank lines) does not split one answer into two slots when the document's next-best hit
    lies right across it; a heading change does."""
    a = ["Guide"]
    # passages 0-1 and 2-3, one heading path; chunk 1 is the best hit, chunk 2 the next
    items = [
        _chunk(1, 0.9, 0.9, a, 0),
        _chunk(2, 0.8, 0.8, a, 2),
        _chunk(0, 0.5, 0.5, a, 0),
        _chunk(3, 0.4, 0.4, a, 2),
    ]
    size = len(items[0].node.content)
    three = 3 * size + 4
    assert _uris(passage_groups(items, three)) == [
        ["guide.md#chunk-1", "guide.md#chunk-0"],
        ["guide.md#chunk-2", "guide.md#chunk-3"],
    ]
    joined = passage_groups(items, three, join_adjacent=True)
    assert _uris(joined) == [
        ["guide.md#chunk-1", "guide.md#chunk-2", "guide.md#chunk-0"],  # best ranked first
        ["guide.md#chunk-3"],  # over the budget: a slot of its own
    ]
    # a heading between them: the author's boundary, never crossed
    b = ["Guide", "B"]
    headed = [
        _chunk(i, s, s, a if i < 2 else b, 0 if i < 2 else 2)
        for i, s in ((1, 0.9), (2, 0.8), (0, 0.5), (3, 0.4))
    ]
    assert _uris(passage_groups(headed, three, join_adjacent=True)) == _uris(
        passage_groups(headed, three)
    )
    # the neighbour is not the next hit itself, but its passage holds it: joined, and the
    # slot grows on over that passage, the better-ranked side first
    items = [
        _chunk(1, 0.9, 0.9, a, 0),
        _chunk(3, 0.8, 0.8, a, 2),
        _chunk(0, 0.6, 0.6, a, 0),
        _chunk(2, 0.5, 0.5, a, 2),
    ]
    assert _uris(passage_groups(items, three, join_adjacent=True)) == [
        ["guide.md#chunk-1", "guide.md#chunk-0", "guide.md#chunk-2"],
        ["guide.md#chunk-3"],
    ]
    assert _uris(passage_groups(items, 4 * size + 6, join_adjacent=True)) == [
        ["guide.md#chunk-1", "guide.md#chunk-3", "guide.md#chunk-0", "guide.md#chunk-2"],
    ]
    # the document's next hit elsewhere (not beside the slot): no join
    items = [
        _chunk(1, 0.9, 0.9, a, 0),
        _chunk(5, 0.8, 0.8, a, 4),
        _chunk(0, 0.6, 0.6, a, 0),
        _chunk(2, 0.5, 0.5, a, 2),
    ]
    assert _uris(passage_groups(items, three, join_adjacent=True))[0] == [
        "guide.md#chunk-1",
        "guide.md#chunk-0",
    ]


def _straddling_faq(tmp: Path, between: str) -> Path:
    """An FAQ page whose zebra answer has an example with two blank lines in it (the
    chunker reads them as an answer's start): its halves lie in two passages."""
    root = tmp / "faq"
    root.mkdir()
    before = "Gardening answer: tomatoes want sun, water and patience every single day. " * 3
    half1 = "Zebra stripes confuse biting flies: the flies cannot land on striped hides. " * 3
    half2 = "Zebra stripes confuse biting flies further, as the example shows for flies. " * 3
    after = "Cooking answer: pasta wants salted boiling water and a timer for the cook. " * 3
    more = "\n\n\n".join(f"Answer {i}: other words on subject number {i}. " * 5 for i in range(4))
    (root / "faq.md").write_text(
        f"# FAQ\n\n{more}\n\n\n{before}\n\n{half1}\n\n\n{between}{half2}\n\n{after}\n"
    )
    return root


def test_find_delivers_an_answer_split_by_a_false_passage_mark_in_one_slot(
    bow, tmp_path: Path
) -> None:
    question = "Why do zebra stripes confuse biting flies?"
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_straddling_faq(tmp_path, ""), target_uri=f"{R}/faq")
        texts = [m.slot_text for m in th.find(question, limit=5).resources]
        whole = [t for t in texts if "biting flies:" in t and "flies further" in t]
        assert whole, "one slot delivers both halves of the answer"
        th.config.join_adjacent_hits = False
        texts = [m.slot_text for m in th.find(question, limit=5).resources]
        assert not [t for t in texts if "biting flies:" in t and "flies further" in t]
        assert any("biting flies:" in t for t in texts)  # two slots, half each
        assert any("flies further" in t for t in texts)


def test_a_heading_between_two_hits_keeps_them_apart(bow, tmp_path: Path) -> None:
    question = "Why do zebra stripes confuse biting flies?"
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_straddling_faq(tmp_path, "## More\n\n"), target_uri=f"{R}/faq")
        texts = [m.slot_text for m in th.find(question, limit=5).resources]
        assert not [t for t in texts if "biting flies:" in t and "flies further" in t]
        assert any("biting flies:" in t for t in texts)
        assert any("flies further" in t for t in texts)


def _answers_without_marks(tmp: Path) -> Path:
    """One file of three answers whose question headings were deleted: nothing marks where
    one answer ends, and each is about one chunk long (``chunk_chars=500``)."""
    root = tmp / "faq"
    root.mkdir()
    before = "gardening tomatoes compost watering seedlings mulch rule. " * 8
    start = "distclean errors leftover files distcheck cleanup rule. " * 8
    rest = "distclean leftover files removed by cleanup rule distcheck. " * 8
    (root / "faq.md").write_text(f"# FAQ\n\n{before}\n\n{start}\n\n{rest}\n")
    return root


def test_a_document_slot_grows_toward_its_better_scoring_neighbour(bow, tmp_path: Path) -> None:
    """With room for one neighbour, a slot shows the chunk that continues the match (it
    scores higher on the query), not the one before the face (``grow_to_better_side``);
    ``False`` keeps the nearer side first, the chunk before."""
    query = "distclean errors cleanup rule"
    with Treehop(embedder=bow, tagger=None, chunk_chars=500) as th:
        th.add_resource(_answers_without_marks(tmp_path), target_uri=f"{R}/faq")
        th.config.document_context_chars = 1100  # the face and one neighbour
        th.config.few_document_passages = False  # (a document slot, though 2 files < 3)
        top = th.find(query, limit=3).resources[0]
        assert "distclean errors" in top.content
        shown = {c.position: c for c in top.collapsed if c.position is not None}
        assert list(shown) == [1], shown
        assert "removed by cleanup" in top.slot_text
        assert "gardening" not in top.slot_text
        th.config.grow_to_better_side = False
        old = th.find(query, limit=3).resources[0]
        assert old.uri == top.uri
        assert [c.position for c in old.collapsed if c.position is not None] == [-1]
        assert "gardening" in old.slot_text and "removed by cleanup" not in old.slot_text


def test_the_shown_run_grows_best_first_and_stops_at_the_budget() -> None:
    """``_passage_shown`` with a score: each step takes the better of the two sides' next
    chunks; a chunk that does not fit closes its side, the other side goes on."""
    from treehop.descent import Track
    from treehop.hierarchical_retriever import _own_score, _passage_shown

    path = ["Guide", "A"]
    owns = {0: 0.1, 1: 0.2, 2: 0.9, 3: 0.8, 4: 0.3, 5: 0.7}
    chunks = {i: _chunk(i, s, s, path, 0) for i, s in owns.items()}
    face = chunks[2].node
    rest = [c for i, c in chunks.items() if i != 2]
    size = len(face.content)
    budget = size + 3 * (size + 2)  # the face and three more
    by_score = _passage_shown(face, rest, budget, better=_own_score(Track.VECTOR))
    # 3 (0.8) > 1 (0.2); then 4 (0.3) > 1 (0.2); then 5 (0.7) > 1
    assert by_score == {f"{DOC}#chunk-3": 1, f"{DOC}#chunk-4": 2, f"{DOC}#chunk-5": 3}
    nearer = _passage_shown(face, rest, budget)
    assert nearer == {f"{DOC}#chunk-1": -1, f"{DOC}#chunk-3": 1, f"{DOC}#chunk-0": -2}


def test_headless_entries_of_a_document_take_slots_of_their_own() -> None:
    """Document slots (a topical query), except where a document's hits all lie under one
    heading path in several passages: each passage is then a slot."""
    from treehop.descent import headless_groups

    faq = ["FAQ"]
    items = [
        _chunk(4, 0.9, 0.9, faq, 4),  # an entry
        _file(f"{R}/docs/other.md", 0.8),
        _chunk(1, 0.7, 0.7, faq, 0),  # another entry of the same chapter
        _chunk(5, 0.6, 0.6, faq, 4),  # continues the first entry
    ]
    assert _uris(headless_groups(items, 10_000)) == [
        ["guide.md#chunk-4", "guide.md#chunk-5"],
        ["other.md"],
        ["guide.md#chunk-1"],
    ]
    # hits under different headings: the page's sections, one document slot
    sections = [
        _chunk(4, 0.9, 0.9, ["Guide", "A"], 4),
        _file(f"{R}/docs/other.md", 0.8),
        _chunk(1, 0.7, 0.7, ["Guide", "B"], 0),
    ]
    assert _uris(headless_groups(sections, 10_000)) == [
        ["guide.md#chunk-4", "guide.md#chunk-1"],
        ["other.md"],
    ]
    # one passage (a long answer cut by size): one document slot, whatever the budget
    one = [_chunk(i, 0.9 - i / 10, 0.9 - i / 10, faq, 0) for i in range(3)]
    assert _uris(headless_groups(one, 10)) == [[f"guide.md#chunk-{i}" for i in range(3)]]


def test_a_topical_query_reaches_each_headless_entry_of_a_chapter(bow, tmp_path: Path) -> None:
    """End to end: a chapter whose entries lost their titles (``Q:`` lines mark them) gives a
    keyword query one slot per matching entry, not one for the chapter; with
    ``headless_entry_slots=False`` the chapter is one slot again."""
    root = tmp_path / "faq"
    root.mkdir()
    entries = [
        ("Why is my mail refused?", "quota exceeded mailbox storage limit cleanup archive. "),
        ("What about the garden?", "gardening tomatoes compost watering seedlings mulch. "),
        ("Who can change it?", "mailbox quota warnings storage limit administrator raise. "),
    ]
    body = "\n\n".join(f"Q: {q}\n\nA: {a * 7}" for q, a in entries)
    (root / "faq.md").write_text(f"# Mail FAQ\n\n{body}\n")
    (root / "notes.md").write_text("unrelated notes about storage of garden tools " * 4)
    query = "mailbox quota storage limit"
    with Treehop(embedder=bow, tagger=None, chunk_chars=500) as th:
        th.add_resource(root, target_uri=f"{R}/faq")
        th.config.few_document_passages = False  # (2 files < 5: every one cut otherwise)
        res = th.find(query, limit=5).resources
        faq = [m for m in res if m.parent_uri == f"{R}/faq/faq.md"]
        assert len(faq) == 2, [m.uri for m in res]
        assert {m.metadata["passage_start"] for m in faq} == {0, 2}
        assert all("gardening" not in m.slot_text for m in faq)
        th.config.headless_entry_slots = False
        res = th.find(query, limit=5).resources
        assert len([m for m in res if m.parent_uri == f"{R}/faq/faq.md"]) == 1


def test_headless_groups_read_hand_written_heading_paths() -> None:
    """A heading path of other values (metadata written by hand: a dict inside) compares
    without being hashed: two passages under it split, another path keeps one slot."""
    from treehop.descent import headless_groups

    odd: list = [{"section": "FAQ"}]
    items = [_chunk(4, 0.9, 0.9, odd, 4), _chunk(1, 0.7, 0.7, odd, 0)]
    assert _uris(headless_groups(items, 10_000)) == [["guide.md#chunk-4"], ["guide.md#chunk-1"]]
    items[1].node.metadata["heading_path"] = [{"section": "other"}]
    assert len(headless_groups(items, 10_000)) == 1


def test_filled_slots_keep_every_document_and_fill_the_rest_with_passages() -> None:
    """Fewer documents than ``k``: each document's best slot stays inside the first ``k``,
    the room left goes to the best further passages in rank order, the rest after."""
    from treehop.descent import filled_slots

    a = [_chunk(i, 0.9 - i / 100, 0.9 - i / 100, ["Guide"], i) for i in range(4)]
    other = _file(f"{R}/docs/notes.md", 0.5)
    third = _file(f"{R}/docs/todo.md", 0.4)
    groups = [[c] for c in a] + [[other], [third]]  # (rank order: guide's 4 passages first)
    got = _uris(filled_slots(groups, 4))
    assert got[:4] == [["guide.md#chunk-0"], ["guide.md#chunk-1"], ["notes.md"], ["todo.md"]]
    assert got[4:] == [["guide.md#chunk-2"], ["guide.md#chunk-3"]]  # (past k, in rank order)
    assert _uris(filled_slots(groups, 6)) == _uris(groups)  # (room for all: rank order)
    assert _uris(filled_slots(groups, 3))[:3] == [["guide.md#chunk-0"], ["notes.md"], ["todo.md"]]


def test_a_topical_query_over_fewer_documents_than_its_limit_fills_it_with_passages(
    bow, tmp_path: Path
) -> None:
    """One long document (a book) and a keyword query: the find fills its limit with the
    document's passages, each slot holding only the chunks its text shows, instead of one
    slot whose face is one chunk with every other match folded behind it
    (``few_document_passages``); off, one slot again. Over at least ``limit`` documents the
    rule changes nothing."""
    root = tmp_path / "book"
    root.mkdir()
    topics = ["oauth token scopes", "kubernetes readiness probes", "logging handlers levels"]
    sections = [
        f"## Part {i}\n\n" + "\n\n".join(f"{t} detail {i}.{j}. " * 6 for j in range(3))
        for i, t in enumerate(topics * 3)
    ]
    (root / "book.md").write_text("# Book\n\n" + "\n\n".join(sections))
    query = "oauth token scopes logging handlers"
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(root, target_uri=f"{R}/book")
        res = th.find(query, limit=6).resources
        assert len(res) == 6
        assert {m.parent_uri for m in res} == {f"{R}/book/book.md"}
        shown = [m.uri for m in res]
        assert len(shown) == len(set(shown))
        for m in res:  # no slot folds another slot's chunk; each holds one run of chunks
            assert not {c.uri for c in m.collapsed} & (set(shown) - {m.uri})
            held = sorted(int(u.rsplit("-", 1)[1]) for u in [m.uri, *(c.uri for c in m.collapsed)])
            assert held == list(range(held[0], held[0] + len(held)))
        assert any("oauth" in m.content for m in res) and any("logging" in m.content for m in res)
        th.config.few_document_passages = False
        one = th.find(query, limit=6).resources
        assert len(one) == 1 and len(one[0].collapsed) > 6
        # many documents: the same results with the rule on and off
        more = tmp_path / "many"
        more.mkdir()
        for i in range(8):
            (more / f"page{i}.md").write_text(f"# Page {i}\n\n" + sections[i])
        th.add_resource(more, target_uri=f"{R}/many")
        q2 = dict(query=query, target_uri=f"{R}/many", limit=4)
        off = [(m.uri, m.score, m.slot_text) for m in th.find(**q2).resources]
        th.config.few_document_passages = True
        assert [(m.uri, m.score, m.slot_text) for m in th.find(**q2).resources] == off
