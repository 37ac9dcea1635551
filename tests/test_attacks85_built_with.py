"""helper attacks85: the embedder name an index's manifest holds is shown cut and redacted.

The CLI and ``treehop mcp`` open an index built with another model under the name its
manifest stores (usage82's ``_BuiltWith``), and the core refuses another model by that name
("would mix vector spaces"). The name is whatever the manifest holds: a 200,000-character
one was echoed whole into the ``EmbeddingError`` (the CLI's stderr, the text an MCP
``find`` answers the agent), and one holding a URL's credentials reached the Python
exception unredacted. Now each is cut to ``MODEL_NAME_CHARS``, escaped and redacted. The
manifest is rewritten with the store's own writer (a consistent, checksummed manifest: what
another program, or a hostile one, can leave).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import ClientOptions, main
from treehop.cli._app import default_client_factory
from treehop.errors import EmbeddingError
from treehop.redaction import MODEL_NAME_CHARS
from treehop.stores.embedded import manifest

from treehop_test_doubles import BagOfWordsEmbedder

TOKEN = "tok3nSECRETxyz"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("a85bw") / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("Roll back with kubectl rollout undo.", is_text=True, name="deploy.md")
    return path


def _named(path: Path, name: object) -> Path:
    """``path``'s index with its manifest saying it was built with ``name``."""
    current = (path / "CURRENT").read_text().split()[0]
    m = json.loads((path / current).read_text())
    m.pop("crc32")
    m["meta"]["embedder"] = name
    manifest._write_manifest(path, m)
    return path


def _copy(built: Path, tmp: Path) -> Path:
    import shutil

    shutil.copytree(built, tmp / "idx")
    return tmp / "idx"


@settings(max_examples=25, deadline=None)
@given(
    name=st.one_of(
        st.text(min_size=1, max_size=30).map(lambda t: "m" + t * 10_000),
        st.just(f"openai:https://bob:{TOKEN}@host/v1?api_key={TOKEN}"),
        st.just("x" * 300_000),
    )
)
def test_would_mix_vector_spaces_shows_the_stored_name_bounded(
    built: Path, tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    path = _named(_copy(built, tmp_path_factory.mktemp("a85mix")), name)
    with pytest.raises(EmbeddingError, match=r"would mix vector spaces$") as info:
        Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    text = str(info.value)
    # (cut to MODEL_NAME_CHARS characters, each escaped to at most 10: ``\U0010ffff``)
    assert len(text) < 10 * MODEL_NAME_CHARS + 200 and TOKEN not in text


def test_built_with_refusal_an_mcp_find_answers_is_bounded(built: Path, tmp_path: Path) -> None:
    path = _named(_copy(built, tmp_path), "n" * 200_000 + f"https://bob:{TOKEN}@h")
    client = default_client_factory(ClientOptions(path, read_only=True, embeds=False))
    try:
        assert [e.uri for e in client.ls("viking://resources")]  # (browsing still works)
        with pytest.raises(EmbeddingError, match="ls, tree and read work") as info:
            client.find("kubectl rollout")
    finally:
        client.close()
    assert len(str(info.value)) < MODEL_NAME_CHARS + 400


def test_cli_find_on_a_hostile_name_prints_a_bounded_error(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _named(_copy(built, tmp_path), "q" * 200_000)
    capsys.readouterr()
    assert main(["find", "kubectl", "--index", str(path)]) == 1
    err = capsys.readouterr().err
    assert "would mix vector spaces" in err and len(err) < 2_000


def test_control_a_short_name_is_shown_whole(built: Path, tmp_path: Path) -> None:
    path = _named(_copy(built, tmp_path), "openai:text-embedding-3-small")
    with pytest.raises(
        EmbeddingError, match=r"built with embedder 'openai:text-embedding-3-small'; opening"
    ):
        Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
