"""The command line's size bound (helper leftovers65b, bench/README.md "(helper
leftovers65b)"): argparse's parse is quadratic in the options it meets, so 20,000 unknown
options took ~8 s of CPU before treehop's own bounded error (helper attacks75's open item).
``main`` now refuses a command line of more than ``MAX_ARGS`` arguments or ``MAX_OPTIONS``
options (before a ``--``) before argparse reads it: a usage error (exit 2) that counts them.

Each test fails on 6ef26e9a unless it says it is a control.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.cli import ExitCode, _app, main


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, float]:
    started = time.process_time()
    code = main(argv)
    spent = time.process_time() - started
    return code, capsys.readouterr().err, spent


def test_twenty_thousand_unknown_options_are_refused_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["find", "deploy", *(f"--opt-{i}=sk-{i:020d}" for i in range(20_000))]
    code, err, spent = _run(capsys, argv)
    assert code == ExitCode.USAGE
    assert "the command line holds 20,002 arguments; at most 10,000" in err
    assert spent < 1.0  # (6ef26e9a: ~8 s of CPU in argparse)
    assert "--opt-" not in err and "sk-" not in err and len(err) < 200  # (nothing echoed)


def test_too_many_options_are_refused_before_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["find", "deploy", *(["--limit", "3"] * (_app.MAX_OPTIONS + 1))]
    code, err, spent = _run(capsys, argv)
    assert code == ExitCode.USAGE and spent < 1.0
    assert f"holds {_app.MAX_OPTIONS + 1:,} options (arguments starting with '-')" in err
    # also in front of the demo, which has its own parser
    code, err, _ = _run(capsys, ["demo", *(["--x"] * 5_000)])
    assert code == ExitCode.USAGE and "holds 5,000 options" in err


def test_a_command_line_at_the_bounds_reaches_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    # (control) MAX_OPTIONS unknown options: argparse's own error, listing ten of them
    argv = ["find", "deploy", *(f"--o{i}" for i in range(_app.MAX_OPTIONS))]
    code, err, _ = _run(capsys, argv)
    assert code == ExitCode.USAGE
    assert "unrecognized arguments: --o0" in err and "holds" not in err


def test_words_after_a_double_dash_are_not_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # (control) a message whose words start with '-' after '--': argparse reads them as
    # positionals (no option lookup), so they do not count; the command's own check answers
    words = ["-x"] * (_app.MAX_OPTIONS + 10)
    code, err, _ = _run(
        capsys, ["--index", str(tmp_path / "none"), "session", "add", "s1", "--", *words]
    )
    assert "starting with '-'" not in err and "session add takes ID" in err, err
    assert code == ExitCode.USAGE


ARGS = st.lists(
    st.sampled_from(["--", "-", "-k", "--limit", "x", "find", "--tag=a", "-5", ""]),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(argv=ARGS, max_args=st.integers(1, 40), max_options=st.integers(0, 20))
def test_the_bound_is_exactly_the_counts(argv: list[str], max_args: int, max_options: int) -> None:
    """``_check_argv`` passes a command line exactly when it holds at most ``MAX_ARGS``
    arguments and ``MAX_OPTIONS`` arguments starting with '-' (not '-' itself) before the
    first '--'; otherwise it is a usage error."""
    before = argv[: argv.index("--")] if "--" in argv else argv
    options = sum(1 for a in before if a.startswith("-") and a != "-")
    ok = len(argv) <= max_args and options <= max_options
    saved = (_app.MAX_ARGS, _app.MAX_OPTIONS)
    _app.MAX_ARGS, _app.MAX_OPTIONS = max_args, max_options
    try:
        _app._check_argv(argv)
    except _app.CliError as exc:
        assert not ok and exc.code == ExitCode.USAGE
        assert str(len(argv) if len(argv) > max_args else options) in str(exc)
    else:
        assert ok
    finally:
        _app.MAX_ARGS, _app.MAX_OPTIONS = saved
