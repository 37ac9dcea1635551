"""A small batch fitted and tagged in a large vocabulary (a re-add) counts its terms into the
document frequencies and scores them with the batch's own IDF and df window, not arrays over
every term: the same tags, scores, statistics and saved state as the whole-vocabulary code it
replaced (kept below as the oracle), on hypothesis-generated batches that hit both the small-
batch path and the whole-vocabulary one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from treehop.tagging import keywords
from treehop.tagging.keywords import KeywordTagger


class _OldTagger(KeywordTagger):
    """The fit and TF-IDF steps as they were: every step over the whole vocabulary."""

    def _fit_flat(self, flat: keywords._Flat, n_docs: int) -> keywords._Counted:
        vocab = self._vocab
        keys = vocab.translate(flat.keys, flat.atoms, add=True)
        gid = vocab.find(keys)
        unseen = np.flatnonzero(gid < 0)
        if unseen.size:
            order = unseen[np.argsort(keys[unseen])]
            gid[order] = vocab.add(keys[order])
        counted = keywords._count(flat, gid)
        n_terms = len(vocab)
        counts = np.bincount(counted.term, minlength=n_terms)
        if self._base_id:
            self._touched.append(keywords._distinct(counted.term))
        df = np.zeros(n_terms, dtype=np.int64)
        df[: self._df.size] = self._df
        self._df = df + counts
        self._n_docs += n_docs
        self._fitted = True
        self._cache = None
        return counted

    def _tfidf_flat(
        self, flat: keywords._Flat, n_docs: int, counted: keywords._Counted | None = None
    ) -> list[list[tuple[str, float]]]:
        idf, ok = self._stats()
        out: list[list[tuple[str, float]]] = [[] for _ in range(n_docs)]
        if counted is None:
            v = self._vocab
            gid = v.find(v.translate(flat.keys, flat.atoms, add=False))
            counted = keywords._count(flat, gid)
        t: NDArray[np.int64] = counted.term
        wanted = (t >= 0) & ok[np.maximum(t, 0)] if t.size and ok.size else t < -1
        if not wanted.any():
            return out
        d, t, tf = counted.doc[wanted], t[wanted], counted.tf[wanted]
        pa, pb = counted.parts(wanted)
        score = (1.0 + np.log(tf)) * idf[t]
        self._select(out, d, t, score, pa, pb)
        return out


_WORDS = [f"{c}{v}{c2}{v2}" for c in "bdkmst" for v in "aeiou" for c2 in "lnr" for v2 in "aoy"]
_TEXT = st.lists(st.sampled_from([*_WORDS[:60], "the", "42", ".", ",", "\n\n"]), max_size=40).map(
    " ".join
)


def _corpus(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(_WORDS, size=30).tolist()) + "." for _ in range(n)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_TEXT, min_size=1, max_size=6), min_size=1, max_size=4), st.booleans())
def test_small_batches_equal_the_whole_vocabulary_steps(
    batches: list[list[str]], saved: bool
) -> None:
    new, old = KeywordTagger(min_df=2), _OldTagger(min_df=2)
    base = _corpus(120, 7)  # a vocabulary many times larger than a small batch's terms
    assert new.partial_fit_extract(base, base) == old.partial_fit_extract(base, base)
    if saved:  # a saved base: later fits are tracked for the state delta
        new = KeywordTagger.from_bytes(new.full_state())
        old = _OldTagger.from_bytes(old.full_state())
        old._base_id = new._base_id  # (a fresh random id per base)
    for batch in batches:
        assert new.partial_fit_extract(batch, batch) == old.partial_fit_extract(batch, batch)
        assert new.extract_many_scored(batch[:2]) == old.extract_many_scored(batch[:2])
        assert np.array_equal(new._df, old._df) and new._n_docs == old._n_docs
        assert new.state_delta() == old.state_delta()
    assert new.to_bytes() == old.to_bytes()


def test_the_small_batch_path_is_taken() -> None:
    """(The batch above is small enough: fewer term rows than an eighth of the terms.)"""
    tagger = KeywordTagger(min_df=2)
    base = _corpus(120, 7)
    tagger.partial_fit(base)
    flat = keywords._flat_terms(["kalo dary sena."], tagger.bigrams)
    assert flat.term.size * 8 < len(tagger._vocab)
