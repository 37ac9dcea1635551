"""``treehop eval`` reads a query file saved as UTF-16 / UTF-32 with its byte order mark, and
refuses other non-UTF-8 bytes in plain words (helper leftovers71b).

PowerShell 5's ``>`` writes UTF-16 with a mark; the file was refused as "'utf-8' codec
can't decode byte 0xff in position 0" (attacks82). A mark names the encoding, so it is
read (as ``treehop index`` reads such a text file); without one nothing is guessed.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import ClientOptions, _eval, main

from treehop_test_doubles import BagOfWordsEmbedder

URI = "viking://resources/guide/editor.md"
ENCODINGS = {
    "utf-8": b"",
    "utf-8-sig": b"",
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
    "utf-32-le": codecs.BOM_UTF32_LE,
    "utf-32-be": codecs.BOM_UTF32_BE,
}


def _encoded(text: str, encoding: str) -> bytes:
    return ENCODINGS[encoding] + text.encode(encoding)


_queries = st.lists(
    # (any character but surrogates, controls and line / paragraph separators: the file is
    # read by lines; the JSON written raw, so non-ASCII text is in the encoding tested)
    st.text(
        st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30
    ).filter(str.strip),
    min_size=1,
    max_size=5,
    unique=True,
)


@settings(max_examples=60, deadline=None)
@given(queries=_queries, encoding=st.sampled_from(sorted(ENCODINGS)), crlf=st.booleans())
def test_every_marked_encoding_reads_as_the_utf8_file(
    tmp_path_factory: pytest.TempPathFactory, queries: list[str], encoding: str, crlf: bool
) -> None:
    end = "\r\n" if crlf else "\n"
    text = "".join(
        json.dumps({"query": q, "relevant": {URI: 1}}, ensure_ascii=False) + end for q in queries
    )
    d = tmp_path_factory.mktemp("q")
    plain, marked = d / "plain.jsonl", d / "marked.jsonl"
    plain.write_bytes(text.encode("utf-8"))
    marked.write_bytes(_encoded(text, encoding))
    want = _eval.load_queries(plain, lambda u: u)
    got = _eval.load_queries(marked, lambda u: u)
    assert [(q.query, q.relevant) for q in got] == [(q.query, q.relevant) for q in want]
    assert len(got) == len(queries)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        # a Latin-1 é on line 2, no mark: not guessed
        (b'{"query": "a", "relevant": {"u": 1}}\n{"query": "caf\xe9"}\n', "line 2 is not UTF-8"),
        # UTF-16 without its mark: valid UTF-8 full of NUL bytes
        ('{"query": "a"}\n'.encode("utf-16-le"), "line 1 holds NUL bytes (UTF-16 without"),
        # a UTF-16 mark over an odd byte count
        (codecs.BOM_UTF16_LE + '{"query": "a"}'.encode("utf-16-le") + b"x", "not UTF-16 text"),
    ],
    ids=["latin-1", "utf16-no-mark", "utf16-truncated"],
)
def test_what_is_refused_is_said_in_plain_words(tmp_path: Path, data: bytes, said: str) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_bytes(data)
    with pytest.raises(_eval.EvalFileError) as info:
        _eval.load_queries(qfile, lambda u: u)
    message = str(info.value)
    assert said in message and "save it as UTF-8" in message
    assert "codec" not in message and "position" not in message


def _factory(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder())


def test_the_cli_reads_a_powershell_utf16_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TREEHOP_INDEX", raising=False)
    src = tmp_path / "guide"
    src.mkdir()
    (src / "editor.md").write_text("# Editor\n\nMouse support lets a click place the cursor.\n")
    (src / "other.md").write_text("# Other\n\nBackups keep a copy of every file saved.\n")
    idx = tmp_path / "index"
    assert main(["index", str(src), "--index", str(idx)], client_factory=_factory) == 0
    capsys.readouterr()
    line = json.dumps({"query": "mouse click cursor", "relevant": {URI: 1}})
    reports = []
    for encoding in ("utf-8", "utf-16-le"):
        qfile = tmp_path / f"q-{encoding}.jsonl"
        qfile.write_bytes(_encoded(line + "\r\n", encoding))
        argv = ["eval", str(qfile), "--index", str(idx), "--json"]
        code = main(argv, client_factory=_factory)
        out, err = capsys.readouterr()
        assert code == 0, err
        reports.append(json.loads(out)["per_query"])
    assert reports[0] == reports[1] and reports[0][0]["RR@10"] == 1.0
    # (control) the same file without its mark is refused, in words, by the CLI
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes((line + "\n").encode("utf-16-le"))
    code = main(["eval", str(bare), "--index", str(idx)], client_factory=_factory)
    _, err = capsys.readouterr()
    assert code != 0 and "NUL bytes" in err and "codec" not in err
