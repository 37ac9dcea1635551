"""The metric and set-building code of ``bench/bench_natural.py`` on tiny hand-made data
(offline, no embedding model).

What the natural-question numbers rest on: the text-overlap judge (an answer is recognised in
any chunking of it, and not in a neighbour's text), an answer counting once at its first rank
while a second slot with it still takes a place, the packing of a baseline's results into a
token budget, and the FAQ parsers deleting every question's text from the corpus while keeping
its answer.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_natural as bn
import bench_tree as bt
import natural_sets as ns
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
