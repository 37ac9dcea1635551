"""helper attacks85: a URI's credentials never reach an error, ``treehop``'s stderr or a warning.

``InvalidURIError`` quoted the caller's URI whole. A web address given where a ``viking://``
URI belongs (a ``target_uri`` pasted from a browser, a label in ``treehop eval``'s file, an
MCP tool's ``uri``) often carries a credential: ``https://bob:<token>@host/x``,
``?api_key=<token>``. The token reached the exception's text, the CLI's ``treehop: error:``
line and any log of it. Now every URI an error quotes is redacted; an ordinary URI is still
quoted whole (the control). Real clients, offline bag-of-words embeddings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from test_usage57_cli import _factory  # (the CLI on the test bag of words)
from treehop import Treehop
from treehop.cli import main
from treehop.errors import InvalidURIError

from treehop_test_doubles import BagOfWordsEmbedder

TOKEN = "tok3nSECRETxyz"

_SHAPES: list[Callable[[str], str]] = [
    lambda t: f"https://bob:{t}@host.example/docs/a.md",
    lambda t: f"https://{t}@host.example/a.md",
    lambda t: f"viking://bob:{t}@resources/a.md",
    lambda t: f"viking://:{t}@resources/a.md",
    lambda t: f"https://host.example/a.md?api_key={t}",
    lambda t: f"viking://resources//a.md?access_token={t}",
    lambda t: f"viking://resources/a/../../b?token={t}",
]


@pytest.fixture(scope="module")
def client() -> Iterator[Treehop]:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_resource("Roll back with kubectl rollout undo.", is_text=True, name="deploy.md")
    yield c
    c.close()


@settings(max_examples=60, deadline=None)
@given(
    token=st.text(alphabet="abcdefghijkXYZ0123456789_-", min_size=10, max_size=40),
    shape=st.sampled_from(range(len(_SHAPES))),
    call=st.sampled_from(["find", "read", "ls"]),
)
@example(token=TOKEN, shape=0, call="find")
def test_an_invalid_uri_error_never_quotes_its_credential(
    client: Treehop, token: str, shape: int, call: str
) -> None:
    uri = _SHAPES[shape](token)
    with pytest.raises(InvalidURIError) as info:
        if call == "find":
            client.find("rollout", target_uri=uri)
        else:
            getattr(client, call)(uri)
    assert token not in str(info.value)
    assert "***" in str(info.value)  # (the URI is still quoted, its credential masked)


def test_control_an_ordinary_invalid_uri_is_still_quoted_whole(client: Treehop) -> None:
    with pytest.raises(InvalidURIError, match=r"URI 'viking://resources//a\.md' has an empty"):
        client.read("viking://resources//a.md")
    with pytest.raises(InvalidURIError, match=r"URI 'https://host\.example/a\.md' must start"):
        client.ls("https://host.example/a.md")


def test_treehop_eval_label_with_credentials_is_not_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    (src / "deploy.md").write_text("# Deploy\n\nRoll back with kubectl rollout undo.\n")
    idx = str(tmp_path / "idx")
    assert main(["index", str(src), "--index", idx], client_factory=_factory) == 0
    for relevant in (
        [f"https://bob:{TOKEN}@host.example/docs/deploy.md"],
        {f"https://bob:{TOKEN}@host.example/docs/deploy.md": "high"},  # (the grade's error)
    ):
        qfile = tmp_path / "q.jsonl"
        qfile.write_text(json.dumps({"query": "kubectl rollout", "relevant": relevant}) + "\n")
        capsys.readouterr()
        assert main(["eval", str(qfile), "--index", idx], client_factory=_factory) == 2
        out = capsys.readouterr()
        assert "treehop: error:" in out.err and "https://***@host.example" in out.err
        assert TOKEN not in out.err + out.out
