"""helper attacks84: ``treehop eval`` splits its JSON Lines file at ``\\n`` only.

JSON allows U+2028 / U+2029 raw inside a string, and a file written with
``json.dumps(..., ensure_ascii=False)`` (or PowerShell's ``Out-File`` of such text) holds
them so; ``str.splitlines`` split there too, so a query holding one was "not valid JSON
(Unterminated string ...)", and every later line's number was off by one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from treehop.cli import _eval
from treehop.cli._eval import EvalFileError

SEPARATORS = "\u2028\u2029"
QUERY = st.text(alphabet=st.sampled_from("abc xyz?" + SEPARATORS), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(query=QUERY, encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]))
@example(query="roll\u2028back", encoding="utf-8")
def test_a_query_holding_a_unicode_line_separator_is_read_as_written(
    tmp_path_factory: pytest.TempPathFactory, query: str, encoding: str
) -> None:
    query = "q " + query  # (a query is not blank)
    line = {"query": query, "relevant": ["viking://resources/a.md"]}
    path = tmp_path_factory.mktemp("e") / "q.jsonl"
    path.write_bytes((json.dumps(line, ensure_ascii=False) + "\n").encode(encoding))
    [q] = _eval.load_queries(path, lambda u: u)
    assert q.query == query and q.line == 1


def test_a_bad_line_after_one_is_named_by_its_own_number(tmp_path: Path) -> None:
    good = json.dumps(
        {"query": "a\u2029b", "relevant": ["viking://resources/a.md"]}, ensure_ascii=False
    )
    path = tmp_path / "q.jsonl"
    path.write_text(good + "\n{oops\n", encoding="utf-8")
    with pytest.raises(EvalFileError, match=r"q\.jsonl:2: not valid JSON"):
        _eval.load_queries(path, lambda u: u)


def test_control_crlf_lines_and_blank_lines_still_read(tmp_path: Path) -> None:
    lines = [{"query": f"q{i}", "relevant": ["viking://resources/a.md"]} for i in range(3)]
    path = tmp_path / "q.jsonl"
    path.write_bytes(("\r\n".join(json.dumps(x) for x in lines) + "\r\n\r\n").encode())
    assert [q.query for q in _eval.load_queries(path, lambda u: u)] == ["q0", "q1", "q2"]
