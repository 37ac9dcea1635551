"""``bench/bench_rank57_screen.py``: the two ranking methods screened in stop 55 (issue 33,
helper rank57; neither kept, bench/README.md). The screen's numbers rest on what each row
changes, so each piece is checked on inputs whose answer is known: the content words a
question keeps, the focus vector (the unit mean of the two views, a non-question left as
it is), and which neighbours a chunk's window takes inside its passage.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_rank57_screen as scr
import bench_tree as bt

from treehop_test_doubles import BagOfWordsEmbedder


def test_content_words_drop_the_stopwords_and_keep_identifiers() -> None:
    assert (
        scr.content_words("How can I store a multidimensional array in a DBM file?")
        == "store multidimensional array DBM file"
    )
    assert scr.content_words("What should I put in user.name ?") == "put user.name"
    # a curly apostrophe reads as a straight one: "I’ve" is "i" + "ve", both stopwords
    assert scr.content_words("I think I\u2019ve found a bug! What should I do?") == (
        "think found bug"
    )
    assert scr.content_words("Why is it so?") == ""


def test_focus_vector_is_the_unit_mean_of_the_two_views() -> None:
    memo = bt.MemoEmbedder(BagOfWordsEmbedder())
    q = "How do I rotate the server logs?"
    own = np.asarray(memo.embed_query(q), dtype=np.float64)
    words = np.asarray(memo.embed_query("rotate server logs"), dtype=np.float64)
    got = scr.focus_vector(memo, q).astype(np.float64)
    want = own / np.linalg.norm(own) + words / np.linalg.norm(words)
    assert np.allclose(got, want / np.linalg.norm(want), atol=1e-6)
    assert not np.allclose(got, own / np.linalg.norm(own), atol=1e-3)
    # not a question, or nothing but stopwords: the query's own vector
    for text in ("rotate the server logs", "Why is it so?"):
        assert np.array_equal(scr.focus_vector(memo, text), memo.embed_query(text))


def test_passage_neighbours_stay_inside_the_passage() -> None:
    near = ("f#chunk-4", "f#chunk-6")
    # chunk 5 inside a passage that began at 3 and goes on into 6: both neighbours
    assert scr.passage_neighbours(5, 3, near, {"f#chunk-6": 3}) == near
    # chunk 5 opens its passage: the chunk before is another answer's
    assert scr.passage_neighbours(5, 5, near, {"f#chunk-6": 5}) == (None, "f#chunk-6")
    # the next chunk opens another passage, or is past the file's end
    assert scr.passage_neighbours(5, 3, near, {"f#chunk-6": 6}) == ("f#chunk-4", None)
    assert scr.passage_neighbours(5, 3, near, {"f#chunk-6": None}) == ("f#chunk-4", None)
    # chunk 0 has no previous chunk; an unknown start keeps both, as main's window does
    assert scr.passage_neighbours(0, 0, ("f#chunk-1",), {"f#chunk-1": 0}) == (None, "f#chunk-1")
    assert scr.passage_neighbours(5, None, near, {}) == near
