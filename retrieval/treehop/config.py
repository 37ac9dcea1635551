"""Retrieval configuration: every knob of the hierarchical search in one validated object."""

from __future__ import annotations

from enum import StrEnum

from pydantic import ConfigDict, Field

from .config_model import ConfigModel


class TagHopTrigger(StrEnum):
    """When the tag-hop stage runs."""

    OFF = "off"
    ALWAYS = "always"
    ON_DEMAND = "on_demand"  # only when the global hits are concentrated in one subtree


class StopRule(StrEnum):
    """When the heap descent stops (see :mod:`treehop.descent`)."""

    BOUND = "bound"
    """When no directory left on the heap can still place a node in the top-k (a proof);
    the rerank track, which has no bound, falls back to CONVERGENCE."""
    CONVERGENCE = "convergence"
    """The seed's rule: when the top-k is unchanged for ``max_convergence_rounds`` rounds."""


class RetrievalConfig(ConfigModel):
    """Parameters of the hierarchical retriever (names follow the seed where it names them).

    A value out of range, of the wrong type or under an unknown name raises
    :class:`~treehop.errors.InvalidConfigError`, at construction and at assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    score_propagation_alpha: float = Field(default=1.0, ge=0.0, le=1.0)
    """Weight of a node's own score in ``alpha*own + (1-alpha)*parent's final score``.

    1 by default because blending in directory scores did not win on held-out queries
    (``bench/bench_quality.py --split``): Cranfield tune half 0.461 at 0.8 vs 0.463 at 1
    nDCG@10, test half 0.485 vs 0.483 at 4-10x the latency; on a tree whose directory
    summaries mix subjects (``bench_tag_hops.py``'s source tree) 0.460 vs 0.473 for flat."""
    global_search_topk: int = Field(default=10, ge=1, le=1000)
    """How many nodes the first global search returns (candidates, tag-hop sources, and the
    bound on every other node). Under the BOUND stop rule it is deepened (x4 per step) while
    no directory on the heap is known to beat that bound."""
    stop_rule: StopRule = StopRule.BOUND
    """How the descent decides it is done; BOUND never loses a node flat search would rank."""
    max_convergence_rounds: int = Field(default=3, ge=1, le=100)
    """CONVERGENCE (and the rerank track): stop when the top-k is unchanged this many rounds."""
    collapse_chunks: bool = True
    """Chunks share result slots (``False``: one slot per chunk). For a question-shaped query
    over documents (:func:`treehop.query_shape.is_question`) a slot is a passage: a run of
    consecutive chunks of one section or answer that fits ``question_context_chars``
    (:func:`treehop.descent.passage_groups`), so a document's different answers take slots
    of their own and no matched chunk hides behind another (issue 33: on an FAQ set every
    miss of one-slot-per-document had the answer in ``collapsed``). For other queries (a
    heading, keywords, a topic: they name a page) a slot is a document, as before: on the
    heading, first-sentence and anchor-text sets passage slots cost 0.006-0.019 nDCG@10 on the
    dev halves (pytest, Flask), a page's second section taking the slot of the next page.
    Either way the slot shows its best-scoring chunk and carries the others in
    :attr:`~treehop.models.MatchedContext.collapsed` (a question's chunks rank by their own
    score: ``question_context_scale`` 0)."""
    headless_entry_slots: bool = True
    """For a query that takes document slots (a heading, keywords, a topic: not a question,
    which takes passage slots anyway): a document whose matched chunks all lie under one
    heading path and in more than one passage (entries marked at ingest without headings
    of their own: an FAQ chapter whose question titles are missing, a plain-text FAQ's
    answers) gives each passage a slot of its own, cut as a question's are
    (:func:`treehop.descent.headless_groups`). A document whose hits lie under different
    headings stays one slot: its headings name the page a topical query asks for.
    Why: a title-like query ("Errors with distclean", "Similarities with csh") over such a
    chapter got one slot for the whole chapter, whose face was another entry, and the
    entry that answered stayed hidden even at rank 100. Natural-question dev halves
    (``bench/bench_natural.py``, ``find`` vs ``find-no-headless-entries``; bench/README.md,
    "Natural questions, round 13"): zsh FAQ nDCG@10 0.754 -> 0.789, autotools FAQ 0.789 ->
    0.832, every other set and the heading / first-sentence / anchor set identical.
    ``False``: one slot per document for such queries."""
    few_document_passages: bool = True
    """For a query that takes document slots: when the candidates span fewer documents than
    the find's ``limit``, every document is cut into passage slots as a question's are
    (:meth:`treehop.descent.Collected.ranked`), so the find fills its ``limit``.
    Why: over one long document (a book, a manual in one file) a topical query got one
    result, its slot one chunk of ~1,000 characters, with the other 3,000-5,000 matched
    chunks folded into its ``collapsed`` (a 4.9 MB file, 6,779 nodes: "how to configure
    logging" -> 1 result, 4,401 collapsed), where a flat store returns ``limit`` chunks.
    A find over many documents (every bench set) keeps document slots: the rule changes
    nothing there. ``False``: document slots whatever the count."""
    sentence_passages: bool = True
    """A query over documents written as a sentence (:func:`treehop.query_shape.is_sentence`:
    a problem report such as "Fetchmail hangs while fetching mail." or "Some objects aren't
    appearing in the admin.", a request such as "papers on wave interaction .") takes
    passage slots and ``question_context_chars`` as a question does; its fusion
    (``dense_weight``) and tree terms stay those of other queries. Why: an FAQ's
    troubleshooting entries are titled that way (32 of fetchmail's 109 questions), and one
    slot per document showed another answer of the page while the one that matched sat in
    ``collapsed``. Measured per part on the natural-question sets (sentence-shaped queries
    flipped from the old rule; nDCG@10 change of the whole half, dev / test): passage slots
    alone fetchmail FAQ +0.020 / +0.044, Django FAQ 0 / +0.037, Cranfield 0 / 0, the pytest
    heading / first-sentence / anchor set -0.002 / 0; the question fusion as well (``w`` 0.8)
    cost that derived set -0.015 / -0.015 (a first sentence's words are its page's own, which
    BM25 rewards), so it stays with questions. ``False``: such queries take document slots."""
    question_error_reports: bool = True
    """A query over documents that reports an error message
    (:func:`treehop.query_shape.is_error_report`: a quoted or pasted message such as
    ``fatal: unable to access ...`` or ``ImportError: No module named ...``, or "I get ...
    error") is read as a question: passage slots, ``question_context_chars`` and the
    question fusion and tree terms (``question_dense_weight`` and the rest). Why: it asks for
    a cause and a fix as a question does, though it often carries no question mark or
    question word, and a pasted message's words (paths, option names, the tool's own words)
    are ones BM25 rewards in every chunk that prints the same message. Measured on the
    natural-question dev halves (``bench/bench_natural.py``, ``find`` vs
    ``find-no-error-reports``, with ``problem_report_passages``; bench/README.md, "Natural
    questions, round 10"; 535 questions): pooled nDCG@10 0.7227 -> 0.7234 (Django FAQ
    0.669 -> 0.683: "command not found: django-admin"; ffmpeg FAQ R@100 0.913 -> 0.957),
    context at 500 / 1,000 / 2,000 tokens unchanged, every other set identical; the
    heading / first-sentence / anchor set identical (none of its queries is a report).
    ``False``: such queries keep the shape the other rules give them."""
    problem_report_passages: bool = True
    """A query over documents that states something does not do its job
    (:func:`treehop.query_shape.is_problem_report`: "X doesn't work when ...", "Y hangs after
    ...", "my mails are not delivered") takes passage slots and ``question_context_chars``,
    as a sentence does (``sentence_passages``), whether or not it ends with a stop; its
    fusion and tree terms stay those of other queries (a statement's words are often the
    page's own: the question fusion cost the first-sentence queries, see
    ``sentence_passages``). Why: an FAQ's troubleshooting entries are titled that way, and
    the answer is one passage of a page. Natural-question dev halves (row
    ``find-no-problem-reports``; bench/README.md, "Natural questions, round 10"): pooled
    nDCG@10 0.7227 -> 0.7234 (fetchmail FAQ 0.848 -> 0.856: "Fetchmail running as root
    stopped working after an OS upgrade"), context unchanged, every other set identical;
    the heading / first-sentence / anchor set identical. ``False``: such queries take
    document slots unless another rule gives them passages."""
    question_problem_reports: bool = True
    """A problem report over documents (``problem_report_passages``'s reader) is read as a
    question, as an error report is (``question_error_reports``): the question fusion and
    tree terms (``question_dense_weight``, ``question_context_scale`` and the rest) on top of
    its passage slots. Why: on the untuned natural-question dev halves that miss the ctx@1000
    goal line, most answers find's block loses to flat *dense* are queries find() did not
    read as questions (19 of 32; 8 of them problem reports, from 32 such queries of 668),
    scored at ``dense_weight`` 0.5 with the tree context on, which buried answers flat dense
    ranks 1-5 (vsftpd's "Help! The built-in vsftpd listener is hanging or crashing!"). A
    report asks for a cause and a fix as a question does. Only with
    ``problem_report_passages`` (off, a report is any other query). Measured only on the queries it
    changes (``bench/bench_natural.py --only-problem-reports``, rows ``find`` vs
    ``find-pr-question``; every other query resolves identically): nine dev halves
    ctx@1000 unchanged, nDCG@10 -0.0007 (one fetchmail question); the 80 untuned dev halves
    +0.0035 ctx@1000 (+0.0008..+0.0067), +0.0034 nDCG@10; pooled over 3,071 questions
    +0.0029 (+0.0007..+0.0055), 12 up / 3 down, and +0.0027 (+0.0011..+0.0043), 28 / 10
    (bench/README.md, helper quality72). The heading / first-sentence / anchor set's one
    problem report (a first sentence) keeps rank 1. ``False``: a problem report keeps the
    other queries' weights."""
    question_sentences: bool = False
    """A sentence over documents (``sentence_passages``'s reader, :func:`treehop.query_shape.
    is_sentence`, that is neither a question nor a report) is read as a question: the
    question fusion and tree terms on top of its passage slots. Off: round 5 measured the
    question fusion costing the *corpus-made* first-sentence queries (a first sentence's
    words are its page's own), and on the natural dev halves it moves nothing measurable
    (helper quality74, row ``find-sentence-question``, ``bench_natural.py --only-shapes
    sentence``; 113 sentences in 3,301 questions): pooled ctx@1000 +0.0008
    (-0.0004..+0.0022), nDCG@10 +0.0011 (-0.0005..+0.0027), the nine ctx@1000 2 up / 4
    down; pytest's first-sentence queries nDCG@10 0.972 -> 0.938. ``False``: a sentence keeps
    the other queries' weights."""
    question_titles: bool = False
    """A title-shaped query over documents (:func:`treehop.query_shape.is_title`: none of
    the shapes the other rules read, e.g. "Disclaimer and copyright", "Using WindowMaker
    with Solaris 2.6 CDE") is read as a question: passage slots, ``question_context_chars``
    and the question fusion and tree terms. Off: a title is also a heading's or a keyword
    query's shape, whose words are the page's own. Natural dev halves (helper quality74, row
    ``find-title-question``, ``bench_natural.py --only-shapes title``; 88 titles in 3,301
    questions): pooled nDCG@10 +0.0028 (+0.0012..+0.0046) but ctx@1000 +0.0009
    (-0.0015..+0.0033), the nine's ctx@1000 1 up / 2 down (zsh), and pytest's corpus-made
    headings / anchors lose (nDCG@10 0.983 -> 0.964, 0.813 -> 0.705). ``False``: a title
    keeps document slots and the other queries' weights."""
    join_adjacent_hits: bool = True
    """A passage slot (a question or sentence over documents) grows across a passage mark
    into the neighbouring passage when that passage holds the document's best hit not yet
    in a slot and no heading separates the two (``treehop.descent._window_slots``): such a mark
    is the chunker's guess from blank lines, which also occur inside an answer, and the two
    halves of one answer otherwise took two slots, each showing about half of it with its
    neighbours' text. Document slots (headings, keywords) are unchanged. Measured on the
    natural-question dev halves (``bench/bench_natural.py``, ``find`` vs
    ``find-no-join-adjacent``): only the zsh FAQ (plain text, answers a blank line apart)
    and lsof's FAQ move, nDCG@10 0.657 -> 0.702 and 0.850 -> 0.852; the heading /
    first-sentence / anchor set is unchanged. ``False``: a slot never crosses a passage
    mark."""
    document_context_chars: int = Field(default=2000, ge=0, le=20_000)
    """A document's result slot shows its face chunk (its best-scoring chunk) and
    the run of the slot's chunks of the same passage around it (one section or answer cut by
    size: :func:`treehop.descent.same_passage`), nearer first, up to this many characters in
    all (:attr:`~treehop.models.MatchedContext.slot_text`, what the framework integrations
    and :func:`~treehop.context_assembly.assemble_context` deliver); 0 shows the face alone.
    Passage slots (questions) take ``question_context_chars``. Natural-question dev halves
    (``bench/bench_natural.py``, ``find`` vs ``find-face-only``; 0 and 1,000 are the same
    with ~1,000-character chunks), nDCG@10 on the delivered text: Django FAQ 0.528 vs 0.512,
    gitfaq 0.808 vs 0.689, lsof FAQ 0.836 vs 0.793."""
    grow_to_better_side: bool = True
    """A slot's shown run (``document_context_chars``, ``question_context_chars``) grows
    best-first: each step takes the neighbouring chunk of the face's passage, before or
    after the run, that scores higher on the query on its own (the chunk's own fused score,
    :attr:`~treehop.models.ChunkContext.own_score`). Why: with the nearer side first and
    ~1,000-character chunks, a 2,000-character slot always showed the chunk *before* its
    face, and where a deleted heading left no mark between two answers, that was the end of
    the previous answer while the continuation of the matched one stayed hidden (the
    Automake FAQ's answers as heading queries: the answer outside the top 100 for three of
    ten). A neighbour that continues the match scores higher than one that does not.
    ``False``: the nearer side first (the one before the face on a tie). Measured in
    bench/README.md ("Natural questions, round 13"), rows ``find`` vs ``find-grow-nearer``."""
    question_context_chars: int | None = Field(default=3000, ge=0, le=20_000)
    """``document_context_chars`` for a question-shaped query over documents, whose slots are
    passages (:func:`treehop.descent.passage_groups`): a slot shows the run of its
    passage's chunks around the face up to this many characters; ``None``: the same as
    ``document_context_chars``.

    Why larger than a document slot's: an answer written for a question is often longer
    than one chunk (Perl's FAQ: median 780 characters, one in nine over 2,000), and a slot
    that cuts it delivers less than half of it; a passage slot grows only over its own
    passage (one section or answer, as marked at ingest), so the extra room goes to the text
    around the match. Keyword and heading queries keep ``document_context_chars`` (their slot
    is a document; the heading sets it was chosen on are not question-shaped).
    Chosen on the pooled dev halves of the natural-question sets (``bench/bench_natural.py``
    rows ``find-qd*``; nDCG@10 / ctx@1000, 290 questions of four FAQ sets): 2,000: 0.761 /
    0.773, 3,000: 0.785 / 0.758, 4,000: 0.793 / 0.741; ctx@2000 0.828 / 0.841 / 0.838.
    3,000 takes most of the ranking gain for a small loss at 1,000 tokens (larger slots fill a
    small block with fewer answers); Cranfield (one abstract per file) is unchanged."""
    excerpt_paragraphs: bool = False
    """:meth:`Treehop.assemble_context`: a chunk cut to the sentences that match the query
    keeps, of the windows that match it best, one that starts a paragraph
    (:data:`treehop.context_assembly.EXCERPT_PARAGRAPHS`). Why: an FAQ chunk holds the tail of
    one answer, a whole answer and the start of the next; the earliest best window opened
    inside the answer before the matched one and cut the matched one's end. Measured in
    bench/README.md, "The excerpt window starts at a paragraph (helper quality73)": off,
    the dev halves' pooled ctx@1000 gain (+0.0009, 3 of 3,301 questions) has no interval
    above zero. ``False``: the earliest best window, wherever it starts."""
    excerpt_skip_heading: bool = False
    """:meth:`Treehop.assemble_context`: a chunk cut to the sentences that match the query
    weighs its windows without the words of the chunk's heading line
    (:data:`treehop.context_assembly.EXCERPT_SKIP_HEADING`). Why: the heading path is shared
    by every part of the chunk, and its query words made the chunk's start win over the
    window holding the answer. Off: on the dev halves (94 sets, 3,411 questions) ctx@1000
    +0.0003 (interval +0.0000..+0.0009, 1 question won, none lost), 500 tokens 4 won / 0
    lost, 2,000 unchanged: no gain with its interval above zero (bench/README.md, "The
    excerpt window weighed without the heading line (helper quality75)"). ``False``: the
    heading's words count like any sentence's."""
    lexical_lead: bool = False
    """:meth:`Treehop.assemble_context`: the one document slot whose hit text holds the
    query's words best (each word weighted by how few slots hold it; above every other slot)
    is placed right after the top slot when find() ranked it third or lower
    (:data:`treehop.context_assembly.LEXICAL_LEAD`). Why: the 1,000-token answers flat hybrid
    delivers and find()'s block misses are mostly lexical questions whose answer find() ranked
    below slots that fill the block. Off: dev halves (97 sets, 3,511 questions) ctx@1000
    +0.0029 (interval -0.0013..+0.0073, 36 won / 30 lost), the nine lose (cranfield 0 / 5)
    (bench/README.md, helper quality77). ``False``: the block keeps find()'s order."""
    extensions_leave_room: bool = False
    """:meth:`Treehop.assemble_context`: a lower slot's extension (a chunk of its passage that
    bids for the budget on its own score) is placed only where the next hit still fits whole
    after it, when that hit fits whole before it; otherwise it waits until every hit was
    offered (:data:`treehop.context_assembly.EXTENSIONS_LEAVE_ROOM`). Why: where find()'s
    1,000-token block misses an answer flat hybrid's holds, the answer's slot is mostly not
    reached, the room spent on the slots above it. Off: dev halves (13 sets, 827
    questions) ctx@1000 -0.0026 (interval -0.0065..+0.0001, 2 won / 4 lost), the nine lose
    at 500 / 1,000 / 2,000 (bench/README.md, helper quality80). ``False``: extensions bid
    by score as before."""
    score_threshold: float = Field(default=0.0, ge=-1.0, le=1.0)
    """Children whose propagated score is not above this are dropped."""
    max_children_per_dir: int = Field(default=50, ge=1, le=10000)
    """How many best-scoring children of one directory a round scores and keeps."""
    max_rounds: int = Field(default=200, ge=1, le=100000)
    """A hard cap on heap rounds, so that a pathological tree cannot run unbounded."""
    expand_leaf_parents: bool = True
    """Also start from the parent directory of each leaf the global search hit."""
    dense_weight: float = Field(default=0.5, ge=0.2, le=1.0)
    """VikingDB's hybrid weight: 1 is dense only; lower mixes in lexical (BM25) scores.

    0.5 by default, chosen by the mean over the dev halves of every ``bench/bench_tree.py`` set
    (never one set), find() nDCG@10 (LoCoMo evidence R@10) in one run, flat hybrid at the same
    weight beside it (``--rows flat-hybrid-0.7,flat-hybrid-0.5,find-0.7,find-0.5 --dev``):

    ==========  ===========  ===========  ===========  ===========  ===========
    find()      Cranfield    Django       pytest       LoCoMo       Flask
    ==========  ===========  ===========  ===========  ===========  ===========
    w=0.7 dev   0.449        0.825        0.918        0.882        0.897
    w=0.5 dev   0.453        0.830        0.928        0.885        0.903
    w=0.7 test  0.499        0.814        0.937        0.876        0.943
    w=0.5 test  0.493        0.815        0.957        0.889        0.953
    ==========  ===========  ===========  ===========  ===========  ===========

    Dev mean 0.7998 at 0.5 vs 0.7942 at 0.7 (the first four sets: 0.774 vs 0.769; in the
    earlier grid 0.8: 0.758, 0.9: 0.735, 1.0: 0.679). The margin is below one set's standard
    error (~0.01) and Cranfield's test half prefers 0.7 (-0.006); 0.5 is the dev choice, not a
    proven win everywhere. Earlier choice (0.7) was made on two sets only. Stores without a
    lexical index ignore it."""
    question_dense_weight: float | None = Field(default=0.8, ge=0.2, le=1.0)
    """``dense_weight`` for a question-shaped query (:func:`treehop.query_shape.is_question`)
    over documents (no memory root in scope), when the call sets none; ``None``: the same as
    ``dense_weight``. A question never gets less dense weight than ``dense_weight`` (the
    larger of the two is used), so a dense-only configuration (1.0) stays dense-only.
    Why: a question a person writes shares few words with its answer, and at 0.5 a chunk
    repeating its words outranked an answer far ahead on the dense score
    (issue 33: dense 0.48 / hybrid 0.74 over dense 0.71 / hybrid 0.71). At 0.8 the lexical
    term can move a chunk by at most a quarter of a cosine unit ((1 - w) / w = 0.25 in dense
    units, BM25 divided by the query's best), so a large dense lead holds while a shared
    rare word (an option name, a command) still breaks near-ties. Chosen on the pooled dev
    halves of the natural-question sets (``bench/bench_natural.py``, rows ``find-qw*``,
    nDCG@10, with ``question_context_scale`` 0): Django FAQ 0.528 / 0.552 / 0.605 / 0.606,
    gitfaq 0.808 / 0.775 / 0.854 / 0.854, lsof FAQ 0.836 / 0.833 / 0.836 / 0.760 at
    w = 0.5 / 0.7 / 0.8 / 1 (26, 11, 113 queries): 0.8 is best or tied on each; dense only
    loses lsof's keyword-laden questions. Heading, first-sentence and anchor-text queries
    are almost never question-shaped and keep ``dense_weight``. Other ways for BM25 to
    enter a question's score (divided by the score an ideal document would attain, times
    the IDF share a chunk matches, gated by the dense gap, reciprocal rank fusion) lose on
    the pooled dev halves (``bench/bench_fusion.py``; bench/README.md, round 3 fusion)."""
    question_heading_weight: float | None = Field(default=None, ge=0.0, le=10.0)
    """``context_heading_weight`` for a question-shaped query over documents; ``None``: the
    same. The heading term was chosen on heading, first-sentence and anchor-text queries,
    which name a section in its own words."""
    question_context_scale: float = Field(default=0.0, ge=0.0, le=1.0)
    """The tree context's neighbour, parent and sibling weights times this for a
    question-shaped query over documents (1: unchanged; at 0 the tree context, the heading
    term with it, is off for them: leaves rank by their own score).

    Why 0: on questions people wrote over documentation, every tree term cost (issue 33,
    measured on main: +0.004 to +0.035 nDCG@10 with the context off on each natural set);
    the terms were chosen on heading, first-sentence and anchor-text queries, where they stay
    (those sets hold almost no question-shaped query: 5 of 338 pytest queries, 2 of 267
    Flask's, 26 of 500 Django's). Memory searches keep them (a turn answers with its
    neighbours: LoCoMo +0.066 R@10). Dev halves, ``bench/bench_natural.py`` rows ``find`` vs
    ``find-qc1``: see ``bench/README.md``."""
    question_chunk_window: bool = True
    """For a question-shaped query over documents: each of the best
    :data:`~treehop.chunk_window.WINDOW_POOL` collected chunks scores on the larger of its
    own cosine and its *window's* (the unit mean of its vector and its previous and next
    chunks', :func:`treehop.chunk_window.window_gains`), the gain times the query's dense
    weight. Why: an answer continues into the next chunk or names its subject in the one
    before; a flat store of ~1,024-token nodes sees that whole stretch, a chunk does not.
    ``False``: a chunk is scored on its own text. Chosen with
    ``question_document_penalty`` on the nine natural-question dev halves (bench/README.md,
    "Natural questions, round 9 (ranking)")."""
    question_window_descent: bool = False
    """For a question-shaped query over documents with ``question_chunk_window``: the descent
    (its stop rule and deeper global steps) settles as many candidates as the chunk window
    reads (the larger of :data:`~treehop.chunk_window.WINDOW_POOL` and three times the
    ``limit``), not only the ``limit``, and the window lifts *every* chunk the descent
    collected, not only the best pool on their own scores. Why: a chunk's own score says
    nothing of its window's, yet only the pool's chunks could be lifted, and the pool grows
    with the ``limit``: find's first ten results depended on the limit asked (issue 33,
    stop 72: flex-faq's dev half, "How can I build a two-pass scanner?", the answer's chunk
    is second at ``limit=50``, where its own score, far below the tenth, is still inside
    the pool, and in none of the ten at ``limit=10``). Off by default (screened on the dev
    halves: bench/README.md, "(helper quality76)")."""
    find_pool: int = Field(default=0, ge=0, le=1000)
    """A find, ``find_many`` or ``search`` whose ``limit`` (or ``retrieve_count``) is below
    this runs as if it asked for ``find_pool`` results and returns the first ``limit`` of
    them; 0: off (each runs at its own limit). Why: the descent's stop rule, the chunk
    window's pool (``max(WINDOW_POOL, 3 * limit)``), the few-documents passage fill and
    the deeper memory runs all read the limit, so ``find(limit=10)`` was not the first ten
    of ``find(limit=50)`` (issue 33, stop 72: the first ten of the deeper list scored
    nDCG@10 +0.0063 over the limit-10 list on 34 dev halves). With ``find_pool = P`` every
    limit up to ``P`` answers a prefix of the same ranked list (a framework's ``k=4`` is the
    first four of its ``k=10``); a limit above ``P`` runs at its own limit. 20 is the
    ``limit`` :meth:`~treehop.Treehop.assemble_context` asks at its default 2,000 tokens
    (:func:`~treehop.context_assembly.context_limit`). Measured on the dev halves:
    bench/README.md, "(helper quality79)"."""
    question_weight_max: bool | None = None
    """For a question-shaped query over documents: each collected leaf scores the larger of
    its fusion at ``question_dense_weight`` and at ``dense_weight`` (flat hybrid's blend of
    the same cosine and BM25), before the chunk window
    (:func:`treehop.chunk_window.weight_max_scores`). Why: where find()'s 1,000-token block
    misses an answer flat hybrid's holds, flat hybrid mostly ranks it 1-3 and find 4-10: an
    answer BM25 finds and the cosine does not, passed by chunks of the question's generic
    phrasing (issue 33, stop 75). A lower weight for every chunk lowers the dense answers
    too (helpers quality70 / 71); the max only raises the lexical ones. ``None``: the module
    default :data:`treehop.chunk_window.QUESTION_WEIGHT_MAX` (off). Off: the nine dev halves
    (535 questions) nDCG@10 -0.0297 (-0.0439..-0.0166, 70 won / 103 lost), ctx@1000 -0.0358
    (-0.0547..-0.0183, 10 / 29); with 4 untuned sets (827) -0.0174 / -0.0183, both intervals
    below zero: the lexical chunks it raises pass more answers than they are
    (bench/README.md, "(helper quality81)")."""
    question_window_earned: bool | None = None
    """For a question-shaped query over documents with ``question_chunk_window``: a chunk's
    window lift is capped so that it scores at most what a chunk of its window (its previous
    or next chunk) earns alone: a collected neighbour its score before the window, another
    its cosine times the query's dense weight (:func:`treehop.chunk_window.earned_lifts`).
    Why: 9 of the 27 slots find() ranked above a 1,000-token loss's answer got there only by
    the window's lift, past chunks their own evidence did not pass (issue 33, stop 75,
    helper quality81); with the cap a window carries a neighbour's evidence to a chunk but
    never ranks it above every chunk it is made of. ``None``: the module default
    :data:`treehop.chunk_window.QUESTION_WINDOW_EARNED` (off). Off: on 15 dev halves (the
    nine + 6 untuned, 849 questions) ctx@1000 +0.0018 (-0.0112..+0.0152), nDCG@10 -0.0113
    (-0.0200..-0.0025); the nine nDCG@10 -0.0183: the cap removes the spread answers the
    window is for (bench/README.md, "(helper quality82)")."""
    question_document_penalty: float = Field(default=0.02, ge=0.0, le=1.0)
    """For a question-shaped query over documents: each further slot of a document gives up
    this much (times the query's dense weight) per slot of the same document above it, and
    the slots are ranked on those scores (:func:`treehop.chunk_window.spread_over_documents`;
    a slot's ``score`` is the adjusted one). Why: window evidence lifts many chunks of one
    coherent page together (a reference page's sections), which crowd out another
    document's answer. 0: off."""
    question_grow_own: bool = True
    """For a question-shaped query over documents: a passage slot grows from its face to the
    neighbouring chunk of its passage that is better on its *own* score (the chunk's own
    fused query score, :attr:`~treehop.descent.Candidate.own`) first, instead of the
    better-ranked one (:func:`treehop.descent.passage_groups`); on a tie the rank decides.
    Why: the rank carries the chunk window's lift (``question_chunk_window``), and a chunk
    lifted by the answer beside it outranked the answer's own continuation, so a slot whose
    budget held one side only grew backwards over the text before the answer (round 9's one
    "extent" loss, perlfaq4 #35). Each slot still opens at the best-ranked chunk left; only
    the neighbour it takes first changes (the one it leaves may open a later slot).
    ``False``: the better-ranked side first. Nine natural-question dev halves
    (``bench/bench_natural.py``, ``find`` vs ``find-no-grow-own``; bench/README.md, "Natural
    questions, round 10"): pooled nDCG@10 / ctx@500 / 1,000 / 2,000 0.7220 / 0.5904 / 0.7019
    / 0.7829 -> 0.7239 / 0.5961 / 0.7037 / 0.7847, only perlfaq moves (four questions, each a
    slot's extent, none lost); the heading / first-sentence / anchor set is unchanged. Test
    halves: Django FAQ ctx@1000 +0.037, perlfaq ctx@500 -0.012, zsh nDCG@10 -0.007; pooled
    0.7331 / 0.5778 / 0.7082 / 0.7963 -> 0.7329 / 0.5744 / 0.7100 / 0.7963."""
    question_hub_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    """For a question-shaped query over documents: each collected leaf's score, minus this
    times its hubness among the best 100 collected leaves (:func:`treehop.hubness.
    hub_scores`: its mean cosine to its 10 most similar fellow candidates, centred on the
    candidates' mean), in dense units (times the query's dense weight). 0 (the default): off.

    What it is for: a chunk that resembles every other candidate (an index page, a list of
    links, an overview of the sections around it) is a *hub*, near the top for many
    questions and the answer to few; subtracting its neighbourhood similarity is CSLS-style
    hubness reduction. Why it is off: on the pooled dev halves of the five natural-question
    sets 0.25 won (nDCG@10 0.696 -> 0.701, ctx@1000 0.656 -> 0.667; Django +0.021, lsof
    +0.007, perlfaq +0.005, Cranfield -0.001), but the held-out test halves did not agree
    (pooled nDCG@10 0.723 -> 0.718; perlfaq -0.013, Cranfield -0.010, which takes Cranfield
    under the +0.02 goal; gitfaq +0.015, lsof +0.007, Django +0.003), and it costs ~1 ms a
    find. It helps FAQ pages with index-like neighbours (Django, gitfaq, lsof on both
    halves); it is left as an option for them. bench/README.md, "Natural questions, round 4
    (ranking)"; rows ``find-hub*`` of ``bench/bench_natural.py``."""
    context_neighbour_weight: float = Field(default=0.35, ge=0.0, le=10.0)
    """Tree context (:mod:`treehop.tree_scoring`): weight of the mean own score of a leaf's
    previous and next sibling (adjacent chunks, adjacent conversation turns) in its final score.
    The three context weights were chosen jointly on the dev halves of all four
    ``bench_tree.py`` sets (never per set), best mean gain over own-score ranking in a grid of
    neighbour 0-0.5 x parent 0-0.2 x sibling 0-0.6: dev +0.015 pytest, -0.003 Cranfield,
    +0.066 LoCoMo R@10, +0.006 Django nDCG@10 (test: +0.014, +0.003, +0.081, +0.023). All three
    at 0 rank leaves by their own score, as a flat store over the same leaves does.

    Re-checked after generated-summary directories and chunked files lost their own slots
    (``include_directories=None``): grid neighbour 0.2/0.35/0.5 x parent 0/0.1/0.2 x sibling
    0.2/0.4/0.6, gain over flat hybrid on the four dev halves (Cranfield, pytest, Django
    nDCG@10, LoCoMo R@10; replayed offline from each query's scores of every node in scope, a
    replay that matches the ``bench_tree.py`` rows within 0.002), mean: (0.2, 0, 0.6) 0.0328,
    (0.2, 0.2, 0.6) 0.0325, (0.35, 0.1, 0.4) 0.0320 -- within 0.001 of each other (one set's
    standard error is ~0.01), so the weights stay. Maximising the worst set instead picks (0.2,
    0, 0.2) (Cranfield +0.021, pytest +0.022, Django +0.020) at the cost of LoCoMo (+0.040 vs
    +0.070): not taken. Also measured and not kept (no dev gain beyond noise on any set): the
    parent term as the mean of the parent's top-m child own scores (m 2/3/5), a document-level
    term (mean of the best 2-3 chunks of the same file), a folder-level term (mean of the best
    1/3/10 documents of the leaf's folder), the grandparent's own score, context that may only
    lift a leaf (never lower it), and neighbours only across consecutively numbered files.

    Checked again with a fifth set (the Flask docs) at ``dense_weight`` 0.5
    (``bench/replay_tree_methods.py``): the neighbour term costs Flask's dev half 0.021
    nDCG@10 (+0.003 on test) but lifts the other four; no grid point of neighbour 0/0.2/0.35 x
    parent 0/0.1 x sibling 0.2/0.4/0.6 beats these weights on the real lists beyond noise, so
    they stay. The loss came from neighbours that are other sections of a page (see
    ``context_neighbour_sections``, which recovers +0.015 of it on the real dev list).
    Subtree statistics, score regularisation and directory-level feedback were
    screened there too and not kept (``bench/README.md``)."""
    context_neighbour_sections: bool = True
    """Tree context: between chunks of a sectioned document, a neighbour counts in proportion
    to the heading path it shares with the leaf (:func:`treehop.tree_scoring.section_overlap`:
    1 within one section, 0.5 for the next subsection of the same page, 0 under another
    top-level heading); ``False`` counts every neighbour in full (memory turns and whole files
    always count in full). Why: the neighbour term averaged unrelated sections into a chunk
    that a query names alone, which cost the Flask docs' dev half 0.021 nDCG@10. Chosen on
    the five dev halves jointly (``bench/replay_tree_methods.py``, gain over the neighbour
    term counted in full, nDCG@10; LoCoMo and Cranfield have no sectioned chunks: +0.000):
    Flask +0.014, pytest +0.002, Django -0.000 (test: +0.004, +0.001, +0.001). Counting only
    same-section neighbours (Flask +0.027) cost Django's dev half 0.010: its anchor-text
    queries describe a page's topic, which the next sections carry."""
    context_parent_weight: float = Field(default=0.1, ge=0.0, le=10.0)
    """Tree context: weight of the leaf's parent's own score (a chunk's file, a file's folder)."""
    context_sibling_weight: float = Field(default=0.4, ge=0.0, le=10.0)
    """Tree context: weight of the best own score among the leaf's siblings (cluster evidence)."""
    context_heading_weight: float = Field(default=0.15, ge=0.0, le=10.0)
    """Tree context, chunks of sectioned documents only: a ranked chunk's final score gains
    this weight times how well the query names the chunk's own section heading
    (:func:`treehop.tree_scoring.heading_match`, 0 to 1; memory turns and whole files have no
    heading and gain nothing). It reorders only: the threshold stays on the own score. Part
    of the tree context: with the three weights above at 0 it is off too.

    Chosen on the dev halves of the Flask, pytest and Django docs jointly
    (``bench/replay_tree_methods.py``, nDCG@10 gain over the context without it, pooled over
    their 482 dev queries; Cranfield and LoCoMo have no sectioned chunks: +0.000): 0.4 had the
    best mean (+0.035 +- 0.007) and 0.15 is the smallest weight within one standard error of
    it (+0.030; the one-standard-error rule, because larger weights began to cost
    first-sentence queries: -0.006 at 0.3, -0.014 at 0.4 on the test halves). The git docs
    were held out. Built (``bench/bench_tree.py``, ``find`` vs ``find-no-heading``), test
    halves: Flask +0.024, pytest +0.000, Django +0.027, git docs +0.028; by query kind
    (replayed, four sets' test halves) heading +0.038, anchor text +0.012, first sentence
    +0.002. Term sets are binary: IDF weights did no better (``bench/README.md``, "Section
    headings")."""
    memory_session_weight: float = Field(default=0.2, ge=0.0, le=10.0)
    """Tree context, memory turns only: weight of BM25 of the turn's whole session (its turns'
    joined text, scored among the sessions of the query's best turns, divided by the best:
    :func:`treehop.memory_context.session_lexical_scores`) beside the weights above (own 1).
    A question's words are often spread over the turns of one exchange. 0.2 was chosen on
    LoCoMo's dev half with the memory window on, evidence R@10 among 0 / 0.2 / 0.4 (+0.011
    and +0.003 over 0; R@5 +0.035, +0.047). As built (``bench/bench_tree.py`` rows ``find``
    vs ``find-no-session``): R@10 +0.003 dev / +0.013 test (within noise), R@5 +0.034 /
    +0.032 and MRR@10 +0.034 / +0.042 (2-3 standard errors). Documents are untouched (in the
    replay, joined-text BM25 of a page's folder or file did not win on the four document
    sets: ``bench/README.md``, "Session evidence for memories")."""
    context_pool: int = Field(default=30, ge=1, le=1000)
    """Tree context: how many best leaves (at least 3x the limit) have their parent opened so
    that siblings and neighbours of strong hits are scored and can enter the list."""
    memory_context_chars: int = Field(default=1000, ge=0, le=20_000)
    """A memory turn's result slot also carries its neighbouring turns of the same session,
    up to this many characters in all (the hit's own text included), the side with the
    better-scoring next turn first; a hit that an earlier slot already carries is merged into
    it instead of taking a slot (:mod:`treehop.memory_context`). 0 returns turns alone.
    Documents are untouched. 1,000 is the chunk size of the framework a user would pick
    instead (a LangChain 1,000-character split of the session transcripts, which holds about
    ten turns): no more text per slot than that baseline. LoCoMo dev half (200 questions,
    ``bench/bench_tree.py``, undated turn texts), evidence R@10 counting every turn a slot
    holds: 0 0.742, 200 0.755, 400 0.818, 600 0.836, 1000 0.874 (the framework 0.701)."""
    # (below ``treehop._http.MAX_SECONDS``, 1e7, as every other timeout; not imported: the
    # config stays free of httpx. Helper attacks70: inf was accepted and left no bound on a
    # reranker inside ``find``)
    rerank_timeout_s: float = Field(default=10.0, gt=0, lt=1e7)
    """A reranker call slower than this falls back to vector scores."""

    tag_hop_trigger: TagHopTrigger = TagHopTrigger.ON_DEMAND
    tag_hop_max_subtrees: int = Field(default=3, ge=0, le=100)
    """At most this many subtrees are added by tag hops per query."""
    tag_hop_max_tags: int = Field(default=5, ge=0, le=100)
    """At most this many tags of the global hits are used to look for hop targets."""
    tag_hop_score_factor: float = Field(default=0.7, ge=0.0, le=1.0)
    """A hop target starts at factor x (score of the hit whose tag it shares)."""
    tag_hop_concentration: float = Field(default=0.8, gt=0.0, le=1.0)
    """ON_DEMAND triggers when at least this share of global hits sits in one subtree."""
    tag_evidence_weight: float = Field(default=0.0, ge=0.0, le=10.0)
    """Tag evidence (:mod:`treehop.tag_hops`): when hops run, a leaf's final score gains this
    x the best hit's score x the share of the hits' (rarity-weighted) tags it carries, and
    leaves reached through those tags join the candidates. 0: hops only add heap starts.

    0 by default because it does not win on held-out queries (``bench/bench_tag_evidence.py``,
    four sets, 200 queries per half): chosen jointly on the dev halves, 0.4 with
    ``tag_hop_concentration`` 0.6 moves test R@10 by 0.000 / -0.007 / 0.000 / 0.000 on the
    Django / Cranfield / LoCoMo / pytest ``far`` subsets (nDCG@10 +0.005 / +0.009 / 0.000 /
    +0.007), at the cost of a tag lookup and one more search per query."""
