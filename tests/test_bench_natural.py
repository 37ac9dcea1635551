"""The metric and set-building code of ``bench/bench_natural.py`` on tiny hand-made data
(offline, no embedding model).

What the natural-question numbers rest on: the text-overlap judge (an answer is recognised in
any chunking of it, and not in a neighbour's text), an answer counting once at its first rank
while a second slot with it still takes a place, the packing of a baseline's results into a
token budget, and the FAQ parsers deleting every question's text from the corpus while keeping
its answer.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_natural as bn
import bench_tree as bt
import natural_sets as ns
from debian_package_double import unpacked_package
from treehop import InvalidConfigError
from treehop.context_assembly import HeuristicCounter

ANSWER = (
    "The login cookie is not being set correctly because the domain of the cookie sent out "
    "by Django does not match the domain in your browser. Set SESSION_COOKIE_DOMAIN to the "
    "domain of your site and restart the server."
)
OTHER = (
    "Django's admin site is customised through ModelAdmin subclasses registered with the "
    "site; templates under admin/ override the look of every page it renders."
)


# -- the judge ------------------------------------------------------------------------


def test_judge_recognises_an_answer_in_any_chunking_of_it() -> None:
    half = " ".join(ANSWER.split()[: len(ANSWER.split()) // 2 + 3])
    assert bn.judge(ANSWER, ANSWER)
    assert bn.judge(half, ANSWER)  # a chunk holding the first half: all its shingles match
    assert bn.judge("# FAQ: admin\n\n" + OTHER + "\n\n" + ANSWER, ANSWER)  # a whole page
    assert bn.judge(ANSWER.upper().replace(".", " ."), ANSWER)  # case and punctuation aside


def test_judge_rejects_another_answer_and_a_small_share_of_this_one() -> None:
    assert not bn.judge(OTHER, ANSWER)
    # a chunk that is mostly the neighbour with a few words of the answer at its end
    tail = " ".join(ANSWER.split()[:6])
    assert not bn.judge(OTHER + " " + OTHER + " " + tail, ANSWER)
    assert not bn.judge("", ANSWER)


def test_judge_half_of_the_smaller_set_is_the_threshold() -> None:
    answer = " ".join(f"w{i}" for i in range(14))  # 10 shingles
    exactly_half = " ".join(f"w{i}" for i in range(9)) + " " + " ".join(f"x{i}" for i in range(20))
    assert bn.judge(exactly_half, answer)  # 5 of the answer's 10 shingles, the answer smaller
    below = " ".join(f"w{i}" for i in range(8)) + " " + " ".join(f"x{i}" for i in range(20))
    assert not bn.judge(below, answer)  # 4 of 10


def test_judge_short_texts_use_word_overlap() -> None:
    assert bn.judge("use git config", "Use `git config --global`.")
    assert not bn.judge("install it", "use git config")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(list("abcdefgh")), max_size=30), st.integers(0, 40))
def test_judge_is_symmetric_and_a_text_is_its_own_answer(toks: list[str], cut: int) -> None:
    a, b = " ".join(toks), " ".join(toks[:cut])
    assert bn.judge(a, b) == bn.judge(b, a)
    if toks:
        assert bn.judge(a, a)


# -- first-rank dedup over delivered texts ---------------------------------------------


def test_ndcg_counts_a_repeated_answer_once_and_the_repeat_still_takes_a_slot() -> None:
    j = bn.Judge()
    answers = [ANSWER]
    first = " ".join(ANSWER.split()[:20])
    second = " ".join(ANSWER.split()[15:])
    ranked = [j.units(t, answers) for t in (OTHER, first, second)]
    assert ranked == [frozenset(), frozenset({"a0"}), frozenset({"a0"})]
    rel = {"a0": 1.0}
    assert bt.ndcg_at(ranked, rel, 10) == pytest.approx(1 / math.log2(3))
    assert bt.recall_at(ranked, rel, 10) == 1.0
    # two answers, one of them delivered twice: the duplicate does not stand in for the other
    two = [ANSWER, OTHER]
    ranked2 = [j.units(t, two) for t in (first, second, "nothing here at all today")]
    rel2 = {"a0": 1.0, "a1": 1.0}
    assert bt.ndcg_at(ranked2, rel2, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_answer_in_context_is_the_share_of_answers_in_the_block() -> None:
    j = bn.Judge()
    assert bn.answer_in_context(ANSWER + "\n\n" + "unrelated words " * 3, [ANSWER, OTHER], j) == 0.5
    assert bn.answer_in_context("", [ANSWER], j) == 0.0


# -- packing into a budget -------------------------------------------------------------


def test_block_pieces_are_the_placed_slots_texts_not_the_blocks_lines() -> None:
    """A page answer is judged per piece; the pieces are the slots the block placed, at
    their tier. Judged line by line instead, a short header line holding the page's words
    counted as the page (bench_context_diag scored pytest-derived 1.000 that way)."""
    from types import SimpleNamespace as NS

    page = ANSWER
    slots = [
        NS(uri="u/other", content=OTHER, abstract="x"),
        NS(uri="u/page", content=page, abstract="session cookie domain"),
    ]
    header = "# session cookie domain"
    ctx = NS(
        text=header + "\n" + slots[0].content,
        sections=[NS(uri="u/other", tier="content"), NS(uri="u/neighbour#2", tier="content")],
    )
    judge = bn.Judge()
    pieces = bn.block_pieces(slots, ctx)
    assert pieces == [slots[0].content]  # a section that is no slot gives no piece
    assert bn.answer_in_context(ctx.text, [page], judge, pieces, by_piece=True) == 0.0
    lines = ctx.text.splitlines()
    assert bn.answer_in_context(ctx.text, [page], judge, lines, by_piece=True) == 1.0
    ctx.sections.append(NS(uri="u/page", tier="abstract"))
    assert bn.block_pieces(slots, ctx)[-1] == "session cookie domain"  # the tier it went in at


def test_pack_fits_the_budget_best_first_and_skips_what_does_not_fit() -> None:
    counter = HeuristicCounter()
    big = "word " * 400  # ~400 tokens
    small_a, small_b = "alpha beta gamma", "delta epsilon"
    block = bn.pack([small_a, big, small_b, small_a], 50, counter)
    assert block == small_a + "\n\n" + small_b  # big skipped, the duplicate dropped
    assert counter.count(block) <= 50
    assert bn.pack([big], 50, counter) == ""


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="ab .,\n", min_size=1, max_size=60), max_size=12),
    st.integers(1, 80),
)
def test_pack_never_exceeds_the_budget(texts: list[str], budget: int) -> None:
    counter = HeuristicCounter()
    block = bn.pack(texts, budget, counter)
    assert counter.count(block) <= budget
    for part in filter(None, block.split("\n\n")):
        assert any(part in t for t in texts)


# -- FAQ parsers: questions out of the corpus, answers kept ----------------------------


def test_heading_questions_are_deleted_and_their_sections_become_answers() -> None:
    page = (
        "# FAQ: General\n\nIntro text here.\n\n## Is Django stable?\n\nYes, it is used in "
        "production.\n\n```\n# not a heading\n```\n\n## Group\n\n### Does it scale?\n\n"
        "Yes, shared nothing.\n"
    )
    text, pairs = ns.split_heading_questions(page)
    assert pairs == [
        ("Is Django stable?", "Yes, it is used in production.\n\n```\n# not a heading\n```"),
        ("Does it scale?", "Yes, shared nothing."),
    ]
    assert "Is Django stable" not in text and "Does it scale" not in text
    assert "Group" not in text  # a question-level heading without text: deleted, no question
    assert text.startswith("# FAQ: General") and "# not a heading" in text


def test_dt_questions_are_deleted_and_dd_becomes_the_answer() -> None:
    html = (
        '<div id="content"><dl><dt class="hdlist1">\nWhat should I put in <code>user.name'
        "</code>?\n</dt>\n<dd><p>Your personal name &amp; family name.</p></dd></dl></div>"
    )
    stripped, pairs = ns.split_dt_questions(html)
    assert pairs == [("What should I put in user.name ?", "Your personal name & family name.")]
    assert "What should I put" not in stripped and "personal name" in stripped


def test_numbered_faq_splits_sections_into_files_without_question_lines() -> None:
    faq = (
        "Table of Contents:\n\n1.0\tGeneral\n1.1\tWhat is it?\n\n2.0\tProblems\n2.1\tBuild\n"
        "2.1.1\tWhy does the build\n\tfail on AIX?\n\n____\n\n"
        "1.0\tGeneral\n\n1.1\tWhat is it?\n\n\tA tool that lists open files.\n\n"
        "2.0\tProblems\n\n2.1\tBuild\n\n2.1.1\tWhy does the build\n\tfail on AIX?\n\n"
        "\tUse the vendor compiler.\n\tThen retry.\n"
    )
    files, qa = ns.split_numbered_faq(faq)
    assert sorted(files) == ["01-general.md", "02-problems.md"]
    assert qa == [
        ("1.1", "What is it?", "A tool that lists open files."),
        ("2.1.1", "Why does the build fail on AIX?", "Use the vendor compiler.\nThen retry."),
    ]
    assert "What is it" not in files["01-general.md"]
    assert "## 2.1 Build" in files["02-problems.md"]
    assert "Why does the build" not in files["02-problems.md"]
    assert "Use the vendor compiler." in files["02-problems.md"]


def test_kept_labels_stand_where_the_questions_were(monkeypatch: pytest.MonkeyPatch) -> None:
    """``KEEP_LABELS`` (``bench_labels_kept.py``): the lsof and Vim splitters leave each
    question's number on a line of its own, its text still gone."""
    faq = (
        "Table of Contents:\n\n1.0\tGeneral\n1.1\tWhat is it?\n\n____\n\n"
        "1.0\tGeneral\n\n1.1\tWhat is it?\n\n\tA tool that lists open files.\n"
    )
    monkeypatch.setattr(ns, "KEEP_LABELS", True)
    files, qa = ns.split_numbered_faq(faq)
    assert qa == [("1.1", "What is it?", "A tool that lists open files.")]
    assert "\n1.1\n\nA tool that lists open files." in files["01-general.md"]
    assert "What is it" not in files["01-general.md"]
    vim = (
        "=" * 40 + "\nSECTION 1 - GENERAL\n\n1.1. What is Vim and how do I\n     get it?\n\n"
        "Vim is an editor.\n"
    )
    files, qa = ns.split_vim_faq(vim)
    assert [q for _, q, _ in qa] == ["What is Vim and how do I get it?"]
    text = "".join(files.values())
    assert "1.1." in text and "What is Vim" not in text and "Vim is an editor." in text
    monkeypatch.setattr(ns, "KEEP_LABELS", False)
    assert "1.1" not in "".join(ns.split_vim_faq(vim)[0].values())


def test_scrub_deletes_quoted_questions_across_line_breaks() -> None:
    q = ns.NaturalQuestion(
        "q1", "Where do I get lsof?", (("See 1.2 Where do I\nget lsof? x", 1.0),)
    )
    files, qs = ns.scrub_questions({"a.md": "see WHERE do I\n  get lsof? for sites"}, [q])
    assert files == {"a.md": "see  for sites"}
    assert qs[0].answers == (("See 1.2  x", 1.0),)
    ns._check_removed(files, qs)
    with pytest.raises(ValueError):
        ns._check_removed({"a.md": "where do i get lsof?"}, qs)


# -- every row end to end on a tiny tree (deterministic embedder, no model) -------------

TOPICS = {
    "net/sockets.md": [
        (
            "How are UDP sockets shown?",
            "UDP sockets appear with protocol UDP and no state "
            "column because datagram sockets keep no connection state at all.",
        ),
        (
            "Why is the TCP window missing?",
            "The TCP window size is printed only with the "
            "option that requests extended socket detail from the kernel tables.",
        ),
    ],
    "fs/nfs.md": [
        (
            "Why does NFS hang?",
            "An unreachable NFS server blocks the stat call; the blocking "
            "avoidance option skips kernel calls that could hang on remote mounts.",
        ),
    ],
    "build/compilers.md": [
        (
            "Which compiler builds on AIX?",
            "On AIX the vendor compiler xlc builds cleanly; gcc "
            "needs the header fixes described in the configuration notes.",
        ),
    ],
}


def _tiny_set(root: Path) -> ns.NaturalSet:
    files: dict[str, str] = {}
    questions = []
    for rel, pairs in TOPICS.items():
        files[rel] = f"# {Path(rel).stem}\n\n" + "\n\n".join(a for _, a in pairs) + "\n"
        questions += [
            ns.NaturalQuestion(f"{rel}#{i}", q, ((a, 1.0),), source=rel)
            for i, (q, a) in enumerate(pairs)
        ]
    return ns.NaturalSet("tiny", ns.write_tree(files, root), questions, "tiny", files)


def test_every_row_runs_end_to_end_and_flat_rows_find_distinct_answers(tmp_path: Path) -> None:
    from treehop_test_doubles import BagOfWordsEmbedder

    nset = _tiny_set(tmp_path / "tiny")
    notes: list[str] = []
    table = bn.evaluate_set(
        nset, list(bn.ROWS), ["dev", "test"], BagOfWordsEmbedder(), [30, 400], 0, notes
    )
    assert {r.key for r in table} == {r.key for r in bn.ROWS}
    by = {(r.half, r.key): r for r in table}
    n_dev = by["dev", "find"].scores.n
    assert n_dev + by["test", "find"].scores.n == len(nset.questions)
    for r in table:
        s = r.scores
        assert 0.0 <= s.ndcg10 <= 1.0 and 0.0 <= s.mrr10 <= 1.0 and s.r10 <= s.r100 + 1e-9
        assert all(0.0 <= v <= 1.0 for v in s.ctx.values())
        assert r.p50 > 0
    for half in ("dev", "test"):
        if by[half, "find"].scores.n:
            # every answer is a short paragraph with the question's rare words: BM25 ranks it
            # first, and a 400-token block holds the whole of it for every row
            assert by[half, "flat-bm25"].scores.mrr10 == 1.0
            assert by[half, "flat-bm25"].scores.ctx[400] == 1.0
            assert by[half, "find"].scores.r100 == 1.0
    # a 30-token block cannot hold a ~25-word answer with its header (60 tokens did until
    # the headers lost their root line and extensions: the budget must still bind)
    assert any(r.scores.ctx[30] < r.scores.ctx[400] for r in table if r.scores.n)
    assert any("LangChain row" in n for n in notes) and any("LlamaIndex row" in n for n in notes)
    for r in table:  # the per-question scores are what the means are made of
        pq = r.scores.per_question
        assert set(pq) == {"ndcg@10", "ctx@30", "ctx@400"}
        assert all(len(v) == r.scores.n for v in pq.values())
        if r.scores.n:
            assert sum(pq["ndcg@10"].values()) / r.scores.n == pytest.approx(r.scores.ndcg10)
            assert sum(pq["ctx@30"].values()) / r.scores.n == pytest.approx(r.scores.ctx[30])


def test_ranks_give_each_questions_first_answer_rank_per_row(tmp_path: Path) -> None:
    """``--ranks``: one record per question and row, its first-answer rank agreeing with the
    row's MRR@10 (flat rows: their limit-10 list is the head of their limit-100 list)."""
    from treehop_test_doubles import BagOfWordsEmbedder

    nset = _tiny_set(tmp_path / "tiny")
    rows = bn.parse_rows("flat-dense,flat-bm25,find")
    ranks: list[dict[str, object]] = []
    table = bn.evaluate_set(nset, rows, ["dev", "test"], BagOfWordsEmbedder(), [], 0, [], ranks)
    assert len(ranks) == len(nset.questions) * len(rows)
    assert {(r["qid"], r["row"]) for r in ranks} == {
        (q.qid, row.key) for q in nset.questions for row in rows
    }
    assert all(r["rank"] == 1 for r in ranks if r["row"] == "flat-bm25")
    for t in table:
        if t.key == "find" or not t.scores.n:
            continue
        got = [r["rank"] for r in ranks if r["row"] == t.key and r["half"] == t.half]
        rr = [1 / r if isinstance(r, int) and r <= 10 else 0.0 for r in got]
        assert sum(rr) / len(rr) == pytest.approx(t.scores.mrr10)


def test_json_written_so_far_round_trips_through_merge(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``--json`` is rewritten after every set (a run stopped midway keeps the sets it
    finished), whole or not at all (a temporary file replaced), and ``--merge`` prints the
    same scores from it."""
    from treehop_test_doubles import BagOfWordsEmbedder

    nset = _tiny_set(tmp_path / "tiny")
    table = bn.evaluate_set(
        nset, bn.parse_rows("flat-bm25,find"), ["dev"], BagOfWordsEmbedder(), [400], 0, []
    )
    out = tmp_path / "partial.json"
    bn._write_json(out, table, ["tiny: a note"])
    assert not (tmp_path / "partial.json.tmp").exists()
    back = [bn.table_row_from_json(d) for d in json.loads(out.read_text())["rows"]]
    assert [(r.dataset, r.half, r.key, r.scores) for r in back] == [
        (r.dataset, r.half, r.key, r.scores) for r in table
    ]
    bn.main(["--merge", str(out)])
    printed = capsys.readouterr().out
    assert "tiny: a note" in printed and "flat BM25" in printed


def test_page_answers_count_in_context_by_piece() -> None:
    """A whole page as the answer (the derived kind): a block with one passage of the page
    among others holds it, though the block is not half from that page."""
    j = bn.Judge()
    page = " ".join(f"p{i}" for i in range(400))
    passage = " ".join(f"p{i}" for i in range(100, 140))
    others = [" ".join(f"o{k}x{i}" for i in range(60)) for k in range(3)]
    block = "\n\n".join([*others, passage])
    assert bn.answer_in_context(block, [page], j) == 0.0
    assert bn.answer_in_context(block, [page], j, [*others, passage], by_piece=True) == 1.0
    assert bn.answer_in_context(block, [page], j, others, by_piece=True) == 0.0
    assert bn.pack_pieces(["a b", "c d", "a b"], 100, HeuristicCounter()) == ["a b", "c d"]


# -- POD (Perl's FAQ) -------------------------------------------------------------------


def test_pod_inline_codes_render_as_text() -> None:
    assert ns.pod_inline("use C<printf> or B<I<bold>> F</etc/passwd>") == (
        "use `printf` or bold /etc/passwd"
    )
    assert ns.pod_inline("C<< $a <=> $b >> sorts") == "`$a <=> $b` sorts"
    assert ns.pod_inline("1 E<lt> 2 E<gt> 0 E<eacute> E<0x41>E<66>") == "1 < 2 > 0 é AB"
    assert ns.pod_inline("X<index>word Z<>") == "word "
    assert ns.pod_inline('L<perlop/"Floating-point Arithmetic">') == (
        "Floating-point Arithmetic in perlop"
    )
    assert ns.pod_inline("L<the docs|perlfunc/sort> L<perlnumber>") == "the docs perlnumber"
    assert ns.pod_inline("L<http://example.org/x>") == "http://example.org/x"
    assert ns.pod_inline("C<unclosed text") == "unclosed text"  # an unclosed code keeps its text
    assert ns.pod_inline("2 < 3 > 1, C<<no space>") == "2 < 3 > 1, `<no space`"


_POD_TEXT = st.text(alphabet='CBILEXZ<> |/"ab ', max_size=80)


@settings(max_examples=200, deadline=None)
@given(_POD_TEXT)
def test_pod_inline_never_fails_and_keeps_plain_letters(text: str) -> None:
    out = ns.pod_inline(text)
    # every lower-case letter of the input that is not inside an X<>/Z<>/E<> code or the
    # target part of an L<> survives: the output never holds letters the input lacked
    assert out.count("a") <= text.count("a") and out.count("b") <= text.count("b")
    assert ns.pod_inline("ab " + text.replace("<", "").replace(">", "")).startswith("ab ")


def test_pod_inline_is_linear_on_long_bracket_runs() -> None:
    hostile = "C" + "<" * 20_000 + " " + "x " * 20_000  # an open code never closed
    out = ns.pod_inline(hostile)
    assert out.count("x") == 20_000


def test_pod_to_markdown_headings_code_items_and_skipped_blocks() -> None:
    pod = (
        "not pod\n\n=head1 NAME\n\nperlfaq9 - Networking\n\n=head2 How do I fetch a page?\n\n"
        "Use L<HTTP::Tiny>:\n\n    my $r = HTTP::Tiny->new->get($url);\n\n"
        "    print $r->{content};\n\nThen parse it.\n\n=over 4\n\n=item *\n\nfirst point\n\n"
        "=item B<--verbose>\n\nprints more\n\n=back\n\n=begin html\n\n<p>skip</p>\n\n=end html\n\n"
        "=for comment hidden\n\n=cut\n\nnot pod either\n"
    )
    md = ns.pod_to_markdown(pod)
    assert md.startswith("# NAME\n\nperlfaq9 - Networking\n\n## How do I fetch a page?")
    assert "```\n    my $r = HTTP::Tiny->new->get($url);\n\n    print $r->{content};\n```" in md
    assert "Use HTTP::Tiny:" in md and "Then parse it." in md
    assert "- --verbose\n\nprints more" in md and "first point" in md
    assert "skip" not in md and "hidden" not in md and "not pod" not in md
    text, pairs = ns.split_heading_questions(md)
    assert [q for q, _ in pairs] == ["How do I fetch a page?"]
    assert "How do I fetch" not in text and "Then parse it." in pairs[0][1]


def test_perlfaq_set_from_an_unpacked_package_deletes_questions_and_keeps_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole builder on a tiny package laid out as ``perl-doc`` unpacks (the marker of an
    earlier unpack present, so nothing is downloaded): =head2 questions leave the corpus,
    also where another answer or a linked page quotes them; linked pages up to the size cap
    join the corpus, larger ones stay out and are named in the note."""
    root = unpacked_package(tmp_path, monkeypatch, ns.PERL_PACKAGE, "")
    pod = root / "usr/share/perl/5.36.0/pod"
    pod.mkdir(parents=True)
    for n in range(1, 10):
        (pod / f"perlfaq{n}.pod").write_text(
            f"=head1 NAME\n\nperlfaq{n} - Part {n}\n\n=head1 Group\n\n"
            f"=head2 How do I frobnicate widget {n} quickly?\n\n"
            f"Use the C<frob{n}> function from L<perlsmall>; it frobnicates widget number "
            f"{n} in place and returns the count of frobnications.\n\n"
            f"    frob{n}($widget);\n\n=head2 Why is gizmo {n} slow?\n\n"
            f'See "How do I frobnicate widget {n} quickly?" first, then L<perlhuge>.\n\n=cut\n'
        )
    (pod / "perlsmall.pod").write_text(
        "=head1 NAME\n\nperlsmall - small\n\nAsk How do I frobnicate widget 3 quickly? here.\n"
    )
    (pod / "perlhuge.pod").write_text("=head1 NAME\n\n" + "huge text. " * 4000)
    nset = ns.perlfaq_set()
    assert len(nset.questions) == 18
    assert set(nset.files) == {
        *(f"perlfaq/perlfaq{n}.md" for n in range(1, 10)),
        "perl/perlsmall.md",
    }
    corpus = "\n".join(nset.files.values())
    assert "frobnicate widget" not in corpus and "gizmo" not in corpus
    q = next(q for q in nset.questions if q.text == "How do I frobnicate widget 4 quickly?")
    assert "Use the `frob4` function from perlsmall" in q.answers[0][0]
    assert "frob4($widget);" in q.answers[0][0]
    assert all(a for q in nset.questions for a, _ in q.answers)
    assert "left out: perlhuge" in nset.note
    assert (nset.root / "perlfaq" / "perlfaq4.md").is_file()


def _borg_page(title: str, body: str) -> str:
    """A page as Borg's Sphinx theme writes it: navigation and a sidebar around the main
    column ``<div class="document clearer body">`` (no ``role="main"``)."""
    return (
        '<html><body><div class="related" role="navigation"><a href="index.html">Borg</a>'
        '</div><div class="sphinxsidebar"><p>Sidebar words every page repeats</p></div>'
        f'<div class="document clearer body"><section id="x"><h1>{title}</h1>{body}'
        "</section></div><footer>Footer words</footer></body></html>"
    )


def test_borg_faq_set_keeps_groups_deletes_questions_and_reads_the_main_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The builder on a tiny package laid out as ``borgbackup-doc`` unpacks (marker present,
    nothing downloaded): the theme's ``body`` div is the text (no sidebar or footer words),
    ``###`` headings are the questions and leave the corpus, the ``##`` groups stay, linked
    pages join up to the size cap and the larger one is named in the note."""
    root = unpacked_package(tmp_path, monkeypatch, ns.BORG_PACKAGE, "1.2.4-1")
    html_dir = root / ns.BORG_HTML
    (html_dir / "usage").mkdir(parents=True)
    faq = _borg_page(
        "Frequently asked questions",
        "<section><h2>Security</h2><section><h3>How do I rotate the repository key?</h3>"
        "<p>Run borg key change-passphrase on the client, then keep a copy of the new key "
        'export somewhere safe, as <a href="usage/key.html">borg key</a> explains.</p>'
        "</section><section><h3>My backup disk is full!</h3><p>Delete old archives with "
        'borg prune and then run borg compact to free the segments; see <a href="changes.html">'
        "the change log</a>.</p></section></section>",
    )
    (html_dir / "faq.html").write_text(faq)
    (html_dir / "usage" / "key.html").write_text(
        _borg_page("borg key", "<p>" + "The key subcommands manage repository keys. " * 8 + "</p>")
    )
    (html_dir / "changes.html").write_text(
        _borg_page("Changelog", "<p>" + "fixed a bug. " * 6000 + "</p>")
    )
    without_theme = ns.ds.convert_sphinx_docs(html_dir, set(), set())
    assert without_theme == []  # Django's main-column class alone finds no body here
    nset = ns.borg_faq_set()
    assert [q.text for q in nset.questions] == [
        "How do I rotate the repository key?",
        "My backup disk is full!",
    ]
    assert set(nset.files) == {"faq.md", "usage/key.md"}
    corpus = "\n".join(nset.files.values())
    assert "rotate the repository key" not in corpus and "disk is full" not in corpus
    assert "## Security" in nset.files["faq.md"]
    assert "Sidebar words" not in corpus and "Footer words" not in corpus
    assert "borg compact to free the segments" in nset.questions[1].answers[0][0]
    assert "changes.md" in nset.note and "1.2.4-1" in nset.note
    assert (nset.root / "usage" / "key.md").is_file()


def _texinfo_page(title: str, sections: str) -> str:
    """A page as texi2html writes it: a table of contents listing every section, and each
    heading followed by two hidden permalinks (``#`` and ``TOC``)."""
    toc = "".join(
        f'<li><a href="#s{n}">{t}</a></li>'
        for n, t in enumerate(re.findall(r"<h3[^>]*>(.*?)<", sections))
    )
    sections = re.sub(
        r"(<h[1-4][^>]*>[^<]*)",
        r'\1<span class="pull-right"><a class="anchor" href="#x" aria-hidden="true">#</a> '
        r'<a class="anchor" href="#toc-x" aria-hidden="true">TOC</a></span>',
        sections,
    )
    return (
        f'<html><body><h1>{title}</h1><h2 class="contents-heading">Table of Contents</h2>'
        f'<div class="contents"><ul>{toc}</ul></div>{sections}</body></html>'
    )


def test_ffmpeg_faq_set_from_an_unpacked_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The builder on a tiny package laid out as ``ffmpeg-doc`` unpacks: the contents list
    and the permalinks leave the text, numbered ``###`` sections are the questions (numbers
    dropped), an answer keeps its ``####`` sub-sections as bold lines (whose scope ends with
    the answer: the next answer is not titled by them), the ``*-all`` copies and pages over
    the cap stay out (named in the note), the other manual pages join."""
    root = unpacked_package(tmp_path, monkeypatch, ns.FFMPEG_PACKAGE, "5.1")
    manual = root / ns.FFMPEG_MANUAL
    manual.mkdir(parents=True)
    (manual / "faq.html").write_text(
        _texinfo_page(
            "FFmpeg FAQ",
            "<h2>1 Usage</h2><h3>1.1 How can I concatenate video files?</h3><p>Use the "
            "concat demuxer when the streams share codecs and parameters.</p><h4>1.1.1 "
            "Using the concat filter</h4><p>The filter re-encodes every input stream.</p>"
            "<h3>1.2 Why was the sameq option removed?</h3><p>It never meant same quality "
            "and misled users into bad encodes.</p>",
        )
    )
    (manual / "ffmpeg.html").write_text(
        _texinfo_page("ffmpeg", "<h2>1 Synopsis</h2><p>" + "ffmpeg reads inputs. " * 20)
    )
    (manual / "ffmpeg-all.html").write_text(_texinfo_page("all", "<p>" + "copy. " * 100))
    (manual / "ffmpeg-filters.html").write_text(
        _texinfo_page("filters", "<p>" + "filter text. " * 13_000)
    )
    nset = ns.ffmpeg_faq_set()
    assert [q.text for q in nset.questions] == [
        "How can I concatenate video files?",
        "Why was the sameq option removed?",
    ]
    assert set(nset.files) == {"faq.md", "ffmpeg.md"}
    faq = nset.files["faq.md"]
    assert "Table of Contents" not in faq and "TOC" not in faq
    assert "concatenate video files" not in faq and "sameq option removed" not in faq
    assert "## 1 Usage" in faq and "**1.1.1 Using the concat filter**" in faq
    assert "#### " not in faq  # the sub-section no longer heads the next answer
    assert "re-encodes every input stream" in nset.questions[0].answers[0][0]
    assert "ffmpeg-filters" in nset.note and "5.1" in nset.note


def test_variant_table_pools_by_question_count(capsys) -> None:  # type: ignore[no-untyped-def]
    """The screening scripts' table: per-set means, then pooled over the FAQ sets and over
    all, weighted by questions (not the mean of the set means); a set with no question of
    a half counts for nothing in the pool."""
    per = {
        "a": {"x": [1.0, 0.0], "cranfield": [0.5], "empty": []},
        "b": {"x": [1.0, 1.0], "cranfield": [0.0], "empty": []},
    }

    def score(key: str, name: str) -> tuple[float, int]:
        xs = per[key][name]
        return (sum(xs) / len(xs) if xs else float("nan")), len(xs)

    bn.print_variant_table("dev", ["x", "cranfield", "empty"], ["a", "b"], score)
    lines = capsys.readouterr().out.splitlines()
    head = "| nDCG@10, dev | x (2) | cranfield (1) | empty (0) | pooled FAQ | pooled all |"
    assert lines[0] == head
    assert lines[2] == "| a | 0.500 | 0.500 | nan | 0.500 | 0.500 |"
    assert lines[3] == "| b | 1.000 | 0.000 | nan | 1.000 | 0.667 |"


def test_chunk_chars_reaches_the_find_and_flat_rows_and_config_every_row(tmp_path: Path) -> None:
    """``--chunk-chars``: the set is cut at that size for ``find()`` and the flat rows alike
    (the flat index reads the client's own leaves, so a smaller size gives both more, shorter
    leaves); ``--config``: the client's config, so every treehop row starts from it."""
    from treehop_test_doubles import BagOfWordsEmbedder

    files = {
        "long.md": "# long\n\n"
        + "\n\n".join(
            f"Paragraph {i} tells how option {i} changes the listing of open files and sockets."
            for i in range(30)
        )
    }
    nset = ns.NaturalSet("long", ns.write_tree(files, tmp_path / "long"), [], "long", files)
    emb = BagOfWordsEmbedder()
    with bn.indexed_set(nset, emb) as big:
        n_big = len(big.flat.texts)
        longest_big = max(len(t) for t in big.flat.texts)
        assert big.th.aio.writer.builder.chunk_chars == 1000
    with bn.indexed_set(nset, emb, 100, {"question_context_chars": 500}) as small:
        assert small.th.aio.writer.builder.chunk_chars == 100
        assert small.th.config.question_context_chars == 500
        assert len(small.flat.texts) > n_big
        assert max(len(t) for t in small.flat.texts) < longest_big
        assert sorted(small.flat.uris) == sorted(
            n.uri for n in small.th.store.iter_nodes(None) if n.is_leaf
        )


def test_config_option_parses_values_and_rejects_unknown_or_invalid_settings() -> None:
    assert bn.parse_config("") == {}
    assert bn.parse_config("question_context_chars=1800, document_context_chars=1200") == {
        "question_context_chars": 1800,
        "document_context_chars": 1200,
    }
    assert bn.parse_config("question_context_chars=null") == {"question_context_chars": None}
    with pytest.raises(SystemExit):
        bn.parse_config("no_such_setting=1")
    with pytest.raises(SystemExit):
        bn.parse_config("question_context_chars")
    with pytest.raises(InvalidConfigError):  # out of range: the config's own validation
        bn.parse_config("document_context_chars=-5")


def test_pooled_weights_sets_by_questions_and_skips_kind_rows(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``--merge --pooled``: a metric pooled over a file's sets is the mean over all their
    questions (a 100-question set counts ten times a 10-question one); ``set/kind`` rows
    repeat their set's questions and are not counted again."""

    def row(dataset: str, n: int, ndcg: float) -> dict[str, object]:
        return {"dataset": dataset, "half": "dev", "row": "find", "name": "find()", "n": n,
                "ndcg@10": ndcg, "R@10": ndcg, "R@100": 1.0, "MRR@10": ndcg,
                "ctx@500": ndcg, "p50_ms": 1.0}  # fmt: skip

    rows = [row("a", 100, 0.5), row("b", 10, 1.0), row("a/heading", 50, 0.0)]
    got = bn.pooled_rows(rows)[("find", "dev")]
    assert got["n"] == 110
    assert got["ndcg@10"] == pytest.approx((100 * 0.5 + 10 * 1.0) / 110)
    assert "ctx@1000" not in got  # not measured: no number invented
    f = tmp_path / "run.json"
    f.write_text(json.dumps({"rows": rows, "notes": [], "argv": []}))
    bn.main(["--merge", str(f), "--pooled"])
    line = next(x for x in capsys.readouterr().out.splitlines() if "| find |" in x)
    assert "| 110 |" in line and f"{(60 / 110):.3f}" in line and line.endswith("| - | - |")


def test_paired_interval_is_exact_on_constant_differences_and_brackets_the_mean() -> None:
    """The paired bootstrap: no spread when every question moves alike, an interval around
    the mean otherwise, narrower with more questions, only shared questions counted, the
    same numbers on every run (fixed seed)."""
    a = {f"q{i}": 0.5 for i in range(20)}
    assert bn.paired_interval(a, a) == (0.0, 0.0, 0.0)
    shifted = {k: v + 0.25 for k, v in a.items()}
    assert bn.paired_interval(shifted, a) == pytest.approx((0.25, 0.25, 0.25))
    assert bn.paired_interval(a, {"other": 1.0}) is None
    # one question in five gained a whole answer: mean +0.2
    few = {f"q{i}": 1.0 if i % 5 == 0 else 0.0 for i in range(10)}
    zero10 = dict.fromkeys(few, 0.0)
    mean, lo, hi = bn.paired_interval(few, zero10) or (0, 0, 0)
    assert mean == pytest.approx(0.2) and 0.0 <= lo < mean < hi <= 0.6
    many = {f"q{i}": 1.0 if i % 5 == 0 else 0.0 for i in range(500)}
    m2, lo2, hi2 = bn.paired_interval(many, dict.fromkeys(many, 0.0)) or (0, 0, 0)
    assert m2 == pytest.approx(0.2) and hi2 - lo2 < (hi - lo) / 3
    assert bn.paired_interval(few, zero10) == bn.paired_interval(few, zero10)
    # extra questions in one row only do not enter the difference
    assert bn.paired_interval({**few, "extra": 9.0}, zero10) == bn.paired_interval(few, zero10)


def test_checks_print_each_sets_interval_and_the_pooled_difference(capsys) -> None:  # type: ignore[no-untyped-def]
    """``print_checks`` puts a bootstrap interval on each set's line when the rows carry
    per-question scores, and pools every set's per-question differences against that set's
    own best flat row."""

    def row(dataset: str, key: str, nd: dict[str, float], ctx: dict[str, float]) -> bn.TableRow:
        n = len(nd)
        scores = bn.Scores(
            n,
            sum(nd.values()) / n,
            0.0,
            0.0,
            0.0,
            {1000: sum(ctx.values()) / n},
            {"ndcg@10": nd, "ctx@1000": ctx},
        )
        return bn.TableRow(dataset, "test", key, key, scores, 1.0)

    qa = [f"q{i}" for i in range(10)]
    qb = [f"q{i}" for i in range(30)]
    table = [
        row("a", "find", dict.fromkeys(qa, 0.8), dict.fromkeys(qa, 1.0)),
        row("a", "flat-dense", dict.fromkeys(qa, 0.5), dict.fromkeys(qa, 0.0)),
        row("a", "flat-hybrid", dict.fromkeys(qa, 0.6), dict.fromkeys(qa, 0.5)),
        row("b", "find", dict.fromkeys(qb, 0.5), dict.fromkeys(qb, 0.5)),
        row("b", "langchain", dict.fromkeys(qb, 0.7), dict.fromkeys(qb, 0.5)),
    ]
    bn.print_checks(table)
    out = capsys.readouterr().out
    assert (
        "- a/test: find() nDCG@10 0.800 vs best flat flat-hybrid 0.600 "
        "(+0.200, 95% CI +0.200..+0.200" in out
    )
    assert "ctx@1000 1.000 vs flat-hybrid 0.500 (+0.500, 95% CI +0.500..+0.500" in out
    assert (
        "- b/test: find() nDCG@10 0.500 vs best flat langchain 0.700 (-0.200, 95% CI -0.200..-0.200"
        in out
    )
    # pooled: 10 questions at +0.2 and 30 at -0.2 -> -0.1; ctx 10 at +0.5, 30 at 0 -> +0.125
    assert "- pooled test, find() minus each set's best flat row: ndcg@10 -0.100" in out
    assert "(40 questions)" in out and "ctx@1000 +0.125" in out
    # rows from runs written before per-question scores existed: no interval, no pooled line
    old = [
        bn.TableRow(
            r.dataset,
            r.half,
            r.key,
            r.name,
            bn.Scores(r.scores.n, r.scores.ndcg10, 0.0, 0.0, 0.0, r.scores.ctx),
            1.0,
        )
        for r in table
    ]
    bn.print_checks(old)
    out = capsys.readouterr().out
    assert "95% CI" not in out and "pooled" not in out and "a/test" in out


def test_chars10_is_the_text_the_first_ten_results_deliver() -> None:
    """``chars@10``: per question, the characters of the limit-10 list together, averaged;
    a row of big pieces shows as much more text for the same answers."""
    answer = "the answer is a short paragraph about sockets and their options"
    qs = [
        ns.NaturalQuestion("q1", "sockets?", ((answer, 1.0),)),
        ns.NaturalQuestion("q2", "options?", ((answer, 1.0),)),
    ]
    small = [answer, "x" * 10]
    big = [answer + " " + "filler words " * 300]
    rr_small = bn.RowRun(
        bn.ROWS[0], {10: {"q1": small, "q2": small[:1]}, 100: {"q1": small, "q2": small}}, {}, []
    )
    rr_big = bn.RowRun(
        bn.ROWS[0], {10: {"q1": big, "q2": big}, 100: {"q1": big, "q2": big}}, {}, []
    )
    judge = bn.Judge()
    s_small = bn.score(rr_small, qs, judge, [])
    s_big = bn.score(rr_big, qs, judge, [])
    assert s_small.chars10 == pytest.approx((len(answer) + 10 + len(answer)) / 2)
    assert s_big.chars10 == pytest.approx(len(big[0]))
    assert s_small.ndcg10 == s_big.ndcg10 == 1.0  # the same nDCG@10, ~20x the text
    row = bn.TableRow("s", "dev", "flat-dense", "flat dense", s_big, 1.0)
    back = bn.table_row_from_json(json.loads(json.dumps(row.as_json())))
    assert back.scores.chars10 == pytest.approx(s_big.chars10)
    old = {k: v for k, v in row.as_json().items() if k != "chars@10"}
    assert math.isnan(bn.table_row_from_json(old).scores.chars10)


def test_resume_runs_only_the_sets_the_json_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json`` is written after every set; ``--resume`` keeps the sets that file holds for
    the asked rows and halves (their rows as they were) and runs only the others; a set
    lacking a row or a half is run again whole; other settings are refused."""
    import dataclasses

    from treehop_test_doubles import BagOfWordsEmbedder

    class Keyed(BagOfWordsEmbedder):
        key = "bag-of-words"

    sets = {n: dataclasses.replace(_tiny_set(tmp_path / n), name=n) for n in ("ta", "tb")}
    stop_at: list[str] = ["tb"]  # the first run is stopped while it loads tb

    def load(name: str, cached: object) -> ns.NaturalSet:
        if name in stop_at:
            stop_at.remove(name)
            raise KeyboardInterrupt
        return sets[name]

    ran: list[str] = []
    evaluate = bn.evaluate_set

    def recorded(nset: ns.NaturalSet, *args: object, **kwargs: object) -> object:
        ran.append(nset.name)
        return evaluate(nset, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ns, "NATURAL_SETS", ("ta", "tb"))
    monkeypatch.setattr(ns, "load_natural_set", load)
    monkeypatch.setattr(bn, "bench_embedder", lambda spec: Keyed())
    monkeypatch.setattr(bn, "evaluate_set", recorded)
    out = tmp_path / "run.json"
    argv = ["--rows", "flat-bm25,find", "--budgets", "400", "--json", str(out)]
    with pytest.raises(KeyboardInterrupt):
        bn.main(argv)
    first = json.loads(out.read_text())
    assert ran == ["ta"] and {r["dataset"] for r in first["rows"]} == {"ta"}

    bn.main([*argv, "--resume"])
    assert ran == ["ta", "tb"]  # ta kept, not run again
    both = json.loads(out.read_text())
    assert [r for r in both["rows"] if r["dataset"] == "ta"] == first["rows"]
    assert {(r["dataset"], r["half"], r["row"]) for r in both["rows"]} == {
        (s, h, k) for s in ("ta", "tb") for h in ("dev", "test") for k in ("flat-bm25", "find")
    }
    assert sorted(n.split(":")[0] for n in both["notes"]) == ["ta", "tb"]

    bn.main([*argv, "--resume"])  # nothing left to run
    assert ran == ["ta", "tb"] and json.loads(out.read_text())["rows"] == both["rows"]
    # a row the file lacks: every set again, each whole
    bn.main(["--rows", "flat-bm25,find,flat-dense", *argv[2:], "--resume"])
    assert ran == ["ta", "tb", "ta", "tb"]
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2 * 2 * 3  # (no set holds rows of two runs)
    # other settings: refused before anything runs
    capsys.readouterr()
    with pytest.raises(SystemExit, match="settings"):
        bn.main([*argv[:3], "500", *argv[4:], "--resume"])
    with pytest.raises(SystemExit, match="--resume needs --json"):
        bn.main(["--rows", "find", "--resume"])
    assert ran == ["ta", "tb", "ta", "tb"]
