"""A folder ingest that leaves a named file or a pattern out: ``add_resource(exclude=[...])``.

Debian's developers-reference ships its manual both split into chapters and on one page
(``developers-reference.html``): indexed together, every answer came back twice in a LangChain
retriever's top 4 (helper usage72). Nothing but the suffix list could leave a file out.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import time
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, Treehop
from treehop.cli import ExitCode, main
from treehop.errors import IngestError, InvalidQueryError, NotFoundError
from treehop.ingest.exclude import MAX_PATTERN_CHARS, MAX_PATTERNS, Exclude, check_exclude
from treehop.ingest.loaders import scan_columns

CHAPTERS = {
    "pkgs.html": (
        "Managing Packages",
        "A non-maintainer upload (NMU) is an upload of a package by someone other than its "
        "maintainer. Before you do a non-maintainer upload, check the bug reports.",
    ),
    "resources.html": (
        "Resources for Debian Developers",
        "The mailing lists are the main way developers talk to each other.",
    ),
    "index.html": ("Debian Developer's Reference", "This manual describes Debian's policies."),
}
PAGE = "<html><head><title>{t}</title></head><body><h1>{t}</h1><p>{b}</p></body></html>"


def _manual(root: Path) -> Path:
    """A Sphinx build of a manual: its chapter pages, the whole manual again on one page,
    a ``_static`` folder and a nested ``_images/old`` folder."""
    (root / "_static").mkdir(parents=True)
    for name, (t, b) in CHAPTERS.items():
        (root / name).write_text(PAGE.format(t=t, b=b))
    (root / "developers-reference.html").write_text(
        PAGE.format(
            t="Developer's Reference (one page)", b=" ".join(b for _, b in CHAPTERS.values())
        )
    )
    (root / "_static" / "notes.txt").write_text("Static notes that are not the manual.\n")
    return root


def _ls(th: Treehop, uri: str) -> list[str]:
    return sorted(e.uri.rsplit("/", 1)[-1] for e in th.ls(uri))


# ------------------------------------------------------------------ the behaviour
def test_a_named_file_is_left_out_and_answers_come_once(bow, tmp_path: Path) -> None:
    site = _manual(tmp_path / "devref")
    with Treehop(embedder=bow, tagger=None) as th:
        res = th.add_resource(
            site, target_uri="viking://resources/devref", exclude=["developers-reference.html"]
        )
        assert res.files == 4 and res.excluded == ["developers-reference.html"]
        assert res.skipped == len(res.excluded) + len(res.skipped_other) + len(res.skipped_dirs)
        assert "developers-reference.html" not in _ls(th, "viking://resources/devref")
        hits = th.find("how do I do a non-maintainer upload", limit=4)
        uris = [h.uri for h in hits.contexts()]
        assert uris and not any("developers-reference.html" in u for u in uris), uris
        assert "pkgs.html" in uris[0]


def test_the_async_client_takes_exclude(bow, tmp_path: Path) -> None:
    site = _manual(tmp_path / "devref")

    async def run() -> list[str]:
        async with AsyncTreehop(embedder=bow, tagger=None) as th:
            res = await th.add_resource(site, exclude=("*.txt", "developers-reference.html"))
            return sorted(res.excluded)

    assert asyncio.run(run()) == ["_static/notes.txt", "developers-reference.html"]


def _tree(root: Path) -> Path:
    for rel in [
        "index.html",
        "api/index.html",
        "api/a.html",
        "api/v2/b.html",
        "other/api/c.html",
        "a/notes",
        "b/notes/n.md",
        "x/_build/y/z.md",
        "keep.md",
        "deep/d.md",
    ]:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"text of {rel}\n")
    return root


def _kept(root: Path, *patterns: str) -> list[str]:
    found, _ = scan_columns(root, exclude=check_exclude(list(patterns)))
    return sorted(found.rels)


def test_the_matching_rules(tmp_path: Path) -> None:
    t = _tree(tmp_path / "t")
    every = _kept(t)
    assert len(every) == 10
    # a name alone matches at any depth (as DirectoryLoader's Path.match does)
    assert _kept(t, "index.html") == sorted(set(every) - {"index.html", "api/index.html"})
    # './' anchors a name to the top
    assert _kept(t, "./index.html") == sorted(set(every) - {"index.html"})
    # a pattern with '/' is matched from the top, and '*' never crosses '/'
    assert _kept(t, "api/*.html") == sorted(set(every) - {"api/index.html", "api/a.html"})
    assert _kept(t, "api*html") == every
    # a name alone that matches a folder leaves the folder out, wherever it is
    assert _kept(t, "api*") == sorted(
        set(every) - {"api/index.html", "api/a.html", "api/v2/b.html", "other/api/c.html"}
    )
    # '**' spans any number of folders (none included)
    assert _kept(t, "**/api/**") == sorted(
        set(every) - {"api/index.html", "api/a.html", "api/v2/b.html", "other/api/c.html"}
    )
    assert _kept(t, "**/_build/**") == sorted(set(every) - {"x/_build/y/z.md"})
    # a trailing '/' matches folders only: the file a/notes stays
    assert _kept(t, "notes/") == sorted(set(every) - {"b/notes/n.md"})
    # a class and '?' match one character of a name
    assert _kept(t, "[!k]ee?.md") == every and _kept(t, "[jk]ee?.md") == sorted(
        set(every) - {"keep.md"}
    )


def test_a_matched_folder_is_not_walked_and_is_named(tmp_path: Path) -> None:
    t = _tree(tmp_path / "t")
    deep = t / "deep"
    for _ in range(6):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("too deep\n")
    with pytest.raises(IngestError, match="directories deep"):
        scan_columns(t, max_depth=4)
    found, report = scan_columns(t, max_depth=4, exclude=check_exclude(["deep/"]))
    assert "deep/" in report.excluded and not any(r.startswith("deep/") for r in found.rels)


def test_a_file_given_by_itself_is_read_whatever_exclude_says(bow, tmp_path: Path) -> None:
    site = _manual(tmp_path / "devref")
    with Treehop(embedder=bow, tagger=None) as th:
        res = th.add_resource(
            site / "developers-reference.html",
            target_uri="viking://resources/one",
            exclude=["*.html"],
        )
        assert res.files == 1 and res.excluded == []
        assert "non-maintainer upload" in th.read("viking://resources/one")


def test_a_text_refuses_exclude(bow) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        with pytest.raises(InvalidQueryError, match="a text has none"):
            th.add_resource("a note", name="n", is_text=True, exclude=["*.md"])
        assert len(th.store) == 0


def test_excluding_everything_says_so(bow, tmp_path: Path) -> None:
    site = _manual(tmp_path / "devref")
    with (
        Treehop(embedder=bow, tagger=None) as th,
        pytest.raises(IngestError, match=r"left out by exclude"),
    ):
        th.add_resource(site, exclude=["*"])


# ------------------------------------------------------------------ a re-add
def test_a_re_add_deletes_what_exclude_now_leaves_out_and_reads_what_it_lets_in(
    bow, tmp_path: Path
) -> None:
    site = _manual(tmp_path / "devref")
    uri = "viking://resources/devref"
    with Treehop(tmp_path / "idx", embedder=bow, tagger=None) as th:
        first = th.add_resource(site, target_uri=uri)
        assert first.files == 5 and th.stat(f"{uri}/developers-reference.html")
    with Treehop(tmp_path / "idx", embedder=bow, tagger=None) as th:
        res = th.add_resource(
            site, target_uri=uri, exclude=["developers-reference.html", "_static/"]
        )
        assert res.deleted >= 2 and res.excluded == ["_static/", "developers-reference.html"]
        assert res.embedded < first.embedded  # the chapters kept as they were
        for gone in ("developers-reference.html", "_static"):
            with pytest.raises(NotFoundError):
                th.stat(f"{uri}/{gone}")
        assert _ls(th, uri) == ["index.html", "pkgs.html", "resources.html"]
        again = th.add_resource(site, target_uri=uri)
        assert again.embedded > 0 and th.stat(f"{uri}/developers-reference.html")
        assert _ls(th, uri) == sorted(["_static", *CHAPTERS, "developers-reference.html"])


# ------------------------------------------------------------------ validation
BAD = [
    "*.css",  # a lone string
    b"*.css",
    {"*.css"},
    [""],
    ["x" * (MAX_PATTERN_CHARS + 1)],
    ["a\x00b"],
    ["a\nb"],
    ["/etc/passwd"],
    ["../x"],
    ["a//b"],
    ["./"],
    ["a\\b"],
    ["[z-a].md"],
    ["**/a/**/b/**"],
    [3],
    [None],
    ["ok"] * (MAX_PATTERNS + 1),
]


@pytest.mark.parametrize("bad", BAD, ids=range(len(BAD)))
def test_a_bad_exclude_is_refused_before_anything_opens(bow, tmp_path: Path, bad: object) -> None:
    missing = tmp_path / "no-such-folder"
    with Treehop(embedder=bow, tagger=None) as th:
        # the folder does not exist: a good exclude reaches that check, a bad one does not
        with pytest.raises(IngestError, match="does not exist"):
            th.add_resource(missing, exclude=["ok/", "*.css"])
        with pytest.raises(InvalidQueryError, match="exclude"):
            th.add_resource(missing, exclude=bad)  # type: ignore[arg-type]
        assert len(th.store) == 0


_PIECES = st.sampled_from(["a", "b", ".", "*", "?", "**", "[ab]", "[!a]", "-", "x"])


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.text(max_size=5),
        st.lists(st.one_of(st.text(max_size=12), st.integers(), st.none()), max_size=4),
        st.lists(st.text(st.sampled_from("ab*?/.[]!-\\"), max_size=12), max_size=4),
    )
)
def test_the_validator_accepts_patterns_or_raises_invalid_query(value: object) -> None:
    try:
        ex = check_exclude(value)
    except InvalidQueryError as e:
        assert "exclude" in str(e) and "\x00" not in str(e)
        return
    assert isinstance(ex, Exclude) and isinstance(value, (list, tuple, type(None)))
    for p in ex.patterns:
        assert p and "\\" not in p and not p.startswith("/") and "\x00" not in p
    ex.file("a/b/c.md")  # any accepted set of patterns can be asked


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PIECES, min_size=1, max_size=6).map("".join),
    st.lists(st.text("ab.x-", min_size=1, max_size=4), max_size=3),
    st.text("ab.x-", min_size=1, max_size=8),
)
def test_a_name_pattern_is_fnmatch_on_the_name_at_any_depth(
    pattern: str, folders: list[str], name: str
) -> None:
    assume(pattern not in (".", ".."))  # (refused: no name is '.' or '..')
    ex = check_exclude([pattern])
    rel = "/".join([*folders, name])
    assert ex.file(rel) == fnmatch.fnmatchcase(name, pattern), (pattern, rel)
    anchored = check_exclude([f"./{pattern}"])
    # ('./**' is every path below the top, as glob's '**' is)
    top = not folders or pattern == "**"
    assert anchored.file(rel) == (top and fnmatch.fnmatchcase(name, pattern)), (pattern, rel)


def test_a_hostile_pattern_on_a_deep_path_is_quick() -> None:
    ex = check_exclude(["**/a*a*a*a*a*a*a*b/**/*a*a*a*a*a*a*c", "a*a*a*a*a*a*a*a*a*b"])
    path = "/".join(["a" * 200] * 250)
    t0 = time.perf_counter()
    for _ in range(20):
        assert not ex.file(path) and not ex.folder(path)
    assert time.perf_counter() - t0 < 5.0  # (~0.05 s here; a backtracking glob: minutes)


# ------------------------------------------------------------------ the CLI
def test_the_cli_takes_exclude(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = _manual(tmp_path / "devref")
    idx = str(tmp_path / "idx")
    argv = ["--index", idx, "index", str(site), "--exclude", "developers-reference.html"]
    assert main([*argv, "--exclude", "_static/"]) == 0
    out = capsys.readouterr().out
    assert "skipped 2 files or folders matched by --exclude: " in out, out
    assert "developers-reference.html" in out and "_static/" in out
    assert main(["--index", idx, "index", str(site), "--json", "--exclude", "*.txt"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["excluded"] == ["_static/notes.txt"] and res["files"] == 4
    bad = ["--index", str(tmp_path / "idx2"), "index", str(site), "--exclude", "/abs/x.html"]
    assert main(bad) == ExitCode.USAGE
    assert "--exclude: '/abs/x.html' is absolute" in capsys.readouterr().err
    assert not (tmp_path / "idx2").exists()
