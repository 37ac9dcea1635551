"""``treehop eval``'s query file as a LlamaIndex / BEIR user writes it (helper usage82).

LlamaIndex's retrieval datasets (``EmbeddingQAFinetuneDataset.relevant_docs``) and
``RetrieverEvaluator(expected_ids=[...])`` list the relevant ids; a hand-written line says
``"relevant": ["viking://..."]``. That was ``'relevant' must be a non-empty object {uri:
grade}``: now a list of URIs is each graded 1. A line naming the query or the labels under
another key (``question``, ``relevant_docs``) was told the key "must be a non-empty string" /
"object", as if it were there: now the error says which keys the line has.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import ClientOptions, _eval, main

from treehop_test_doubles import BagOfWordsEmbedder


def _write(tmp_path: Path, *lines: dict[str, object]) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_list_of_relevant_uris_grades_each_one(tmp_path: Path) -> None:
    qfile = _write(
        tmp_path,
        {"query": "roll back", "relevant": ["viking://resources/a.md", "viking://resources/b.md"]},
    )
    [q] = _eval.load_queries(qfile, lambda u: u)
    assert q.relevant == {"viking://resources/a.md": 1, "viking://resources/b.md": 1}


@pytest.mark.parametrize(
    ("relevant", "said"),
    [
        ([], "'relevant' must be a non-empty object {uri: grade} or list of URIs"),
        (["viking://resources/a.md", 3], "'relevant' list item 1 must be a URI string, got int"),
        ("viking://resources/a.md", "'relevant' must be a non-empty object"),
        (None, "'relevant' must be a non-empty object"),
    ],
)
def test_a_relevant_value_of_another_shape_is_still_refused(
    tmp_path: Path, relevant: object, said: str
) -> None:
    qfile = _write(tmp_path, {"query": "roll back", "relevant": relevant})
    with pytest.raises(_eval.EvalFileError, match=":1: " + _escaped(said)):
        _eval.load_queries(qfile, lambda u: u)


def test_a_missing_key_names_the_keys_the_line_has(tmp_path: Path) -> None:
    qfile = _write(tmp_path, {"question": "roll back", "relevant": {"viking://resources/a.md": 1}})
    with pytest.raises(
        _eval.EvalFileError,
        match=r"'query' must be a non-empty string: the line has no 'query' key "
        r"\(keys: question, relevant\)",
    ):
        _eval.load_queries(qfile, lambda u: u)
    qfile = _write(tmp_path, {"query": "roll back", "relevant_docs": ["viking://resources/a.md"]})
    with pytest.raises(
        _eval.EvalFileError, match=r"the line has no 'relevant' key \(keys: query, relevant_docs\)"
    ):
        _eval.load_queries(qfile, lambda u: u)


def test_a_present_but_empty_query_keeps_its_message(tmp_path: Path) -> None:
    # (control: the key is there, its value is wrong)
    qfile = _write(tmp_path, {"query": "  ", "relevant": {"viking://resources/a.md": 1}})
    with pytest.raises(_eval.EvalFileError, match="'query' must be a non-empty string"):
        _eval.load_queries(qfile, lambda u: u)


_URI = st.from_regex(r"\Aviking://resources/[a-z]{1,8}(/[a-z]{1,8}){0,2}\.md\Z")


@given(uris=st.lists(_URI, min_size=1, max_size=6))
def test_the_list_form_reads_as_the_object_form_with_grade_one(
    tmp_path_factory: pytest.TempPathFactory, uris: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("u82prop")
    as_list = _eval.load_queries(_write(tmp, {"query": "q", "relevant": uris}), lambda u: u)
    as_dict = _eval.load_queries(
        _write(tmp, {"query": "q", "relevant": dict.fromkeys(uris, 1)}), lambda u: u
    )
    assert as_list == as_dict


def test_eval_scores_a_list_labelled_file_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def factory(options: ClientOptions) -> Treehop:
        return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())

    src = tmp_path / "docs"
    src.mkdir()
    (src / "deploy.md").write_text("# Deploy\n\nRoll back with kubectl rollout undo.\n")
    (src / "keys.md").write_text("# Keys\n\nRotate API keys every 90 days.\n")
    idx = str(tmp_path / "idx")
    assert main(["index", str(src), "--index", idx], client_factory=factory) == 0
    qfile = _write(
        tmp_path,
        {"query": "kubectl rollout undo", "relevant": ["viking://resources/docs/deploy.md"]},
    )
    capsys.readouterr()
    assert main(["eval", str(qfile), "--index", idx, "--json"], client_factory=factory) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["metrics"] == {"nDCG@10": 1.0, "R@10": 1.0, "RR@10": 1.0}


def _escaped(text: str) -> str:
    import re

    return re.escape(text)
