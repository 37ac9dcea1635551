"""``--index ~/kb`` where no shell expands it (helper usage82).

An MCP client's JSON config (``"args": ["--index", "~/.treehop", "mcp"]``, as docs/agents.md
shows the shape), a ``.env`` file read into ``$TREEHOP_INDEX``, a systemd unit or a
subprocess list hand the CLI ``~`` unexpanded. ``treehop --index '~/kb' index docs`` made a
folder literally named ``~`` in the working directory and printed "index ~/kb holds 8
nodes", and ``treehop mcp`` there served a new, empty index. The CLI now expands ``~`` as a
shell would; a ``~user`` it cannot expand is a usage error, not a folder named after it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, ExitCode, main

from treehop_test_doubles import BagOfWordsEmbedder


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    home, work, docs = tmp_path / "home", tmp_path / "work", tmp_path / "docs"
    for p in (home, work, docs):
        p.mkdir()
    (docs / "deploy.md").write_text("# Deploy\n\nRoll back with kubectl rollout undo.\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("TREEHOP_INDEX", raising=False)
    monkeypatch.chdir(work)
    return home, work, docs


def test_index_option_with_a_tilde_is_under_home(
    places: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    home, work, docs = places
    assert main(["--index", "~/kb", "index", str(docs)], client_factory=_factory) == ExitCode.OK
    assert (home / "kb" / "CURRENT").is_file()
    assert list(work.iterdir()) == []  # no folder named "~"
    assert f"index {home / 'kb'} holds" in capsys.readouterr().out
    code = main(["--index", "~/kb", "ls", "viking://resources/docs"], client_factory=_factory)
    assert code == ExitCode.OK
    assert "viking://resources/docs/deploy.md" in capsys.readouterr().out


def test_the_index_variable_with_a_tilde_is_under_home(
    places: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, work, docs = places
    monkeypatch.setenv("TREEHOP_INDEX", "~/kb2")
    assert main(["index", str(docs)], client_factory=_factory) == ExitCode.OK
    assert (home / "kb2" / "CURRENT").is_file()
    assert list(work.iterdir()) == []


def test_a_tilde_user_that_cannot_be_expanded_is_refused(
    places: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, work, docs = places
    argv = ["--index", "~no_such_user_u82/kb", "index", str(docs)]
    assert main(argv, client_factory=_factory) == ExitCode.USAGE
    assert "cannot expand '~no_such_user_u82'" in capsys.readouterr().err
    assert list(work.iterdir()) == []


def test_a_relative_index_path_stays_relative(
    places: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # (control: no tilde, no change; a '~' inside a name is a name)
    _, work, docs = places
    assert main(["--index", "a~b", "index", str(docs)], client_factory=_factory) == ExitCode.OK
    assert (work / "a~b" / "CURRENT").is_file()
