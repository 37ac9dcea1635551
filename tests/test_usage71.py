"""A user's first hour, stop 63: the command line's unknown options.

``treehop find "hold a package" -k 2`` (``k`` / ``top_k`` are the frameworks' names for
``--limit``), ``--tags`` for ``--tag``, ``--limt``: argparse answered with the *top-level*
usage line (``usage: treehop [-h] [--version] ... COMMAND ...``) and a bare "unrecognized
arguments: -k 2", naming neither the command's options nor what was meant. Now the command's
own parser reports it (its usage line, ``treehop find: error:``) with a "did you mean" for an
option it recognises as another spelling of one it has; anything else as before, exit 2.
"""

from __future__ import annotations

import pytest

from treehop.cli import ExitCode, main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    # Unknown options are refused while parsing: no index is opened (none exists here).
    code = main(["--index", "/nonexistent/usage71-index", *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["find", "hold a package", "-k", "2"], "--limit"),
        (["find", "hold a package", "--top-k", "2"], "--limit"),
        (["find", "hold a package", "--top_k=2"], "--limit"),
        (["search", "hold a package", "--similarity-top-k", "2"], "--limit"),
        (["find", "hold a package", "--limt", "2"], "--limit"),
        (["find", "hold a package", "--tags", "x"], "--tag"),
        (["find", "hold a package", "--target_uri", "viking://resources"], "--target-uri"),
        (["eval", "q.jsonl", "-k", "5"], "--k"),
        (["eval", "q.jsonl", "--top-k", "5"], "--k"),
        (["tree", "--dpeth", "2"], "--depth"),
        (["session", "show", "ID", "--jsn"], "--json"),
    ],
)
def test_an_unknown_option_names_the_one_meant(
    capsys: pytest.CaptureFixture[str], argv: list[str], meant: str
) -> None:
    code, err = _run(capsys, *argv)
    assert code == ExitCode.USAGE
    command = " ".join(
        a for a in argv[:2] if a in ("find", "search", "eval", "tree", "session", "show")
    )
    assert f"usage: treehop {command}" in err, err
    assert f"treehop {command}: error: unrecognized arguments:" in err, err
    assert f"did you mean {meant}?" in err, err


def test_an_option_close_to_none_is_reported_as_before(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = _run(capsys, "find", "hold a package", "--zzzzzz", "1")
    assert code == ExitCode.USAGE
    assert "treehop find: error: unrecognized arguments: --zzzzzz 1" in err
    assert "did you mean" not in err


def test_a_stray_word_is_reported_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    """Control: an extra positional word (an unquoted query) gets no option guessed."""
    code, err = _run(capsys, "ls", "viking://resources", "extra")
    assert code == ExitCode.USAGE
    assert "unrecognized arguments: extra" in err
    assert "did you mean" not in err


def test_known_options_still_parse(capsys: pytest.CaptureFixture[str]) -> None:
    """Control: a right command line gets past parsing (to the missing index: exit 3)."""
    code, err = _run(capsys, "find", "hold a package", "--limit", "2", "--tag", "x")
    assert code == ExitCode.NOT_FOUND
    assert "no treehop index" in err
