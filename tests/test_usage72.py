"""A user's first hour, stop 64: a documentation site's assets, a folder's name, a file target.

Indexing a Debian manual (DocBook's ``aptitude-doc-en``, Sphinx's ``developers-reference``):
its style sheets and scripts were read as source files (``aptitude.css`` headed the folder's
overview; ``searchindex.js`` became a hundred chunks of one JSON line); the folder's abstract
began with its on-disk name (``en: Main author of the document.``) where the index page names
the manual; and a find scoped to a file that answered nothing said nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import ExitCode, main
from treehop.errors import InvalidQueryError, NotFoundError
from treehop.ingest import loaders
from treehop.ingest.loaders import scan, walk

PAGE = (
    "<html><head><title>{title}</title><link rel='stylesheet' href='_static/site.css'>"
    "<script src='_static/jquery.js'></script></head><body><h1>{title}</h1>"
    "<p>{body}</p></body></html>"
)


def _site(root: Path) -> Path:
    """A built documentation site: pages, a style sheet, scripts, a source map, an image."""
    (root / "_static").mkdir(parents=True)
    (root / "index.html").write_text(
        PAGE.format(
            title="Frobnicator Operator Manual",
            body="Main author of the document. This manual explains the frobnicator.",
        )
    )
    (root / "tuning.html").write_text(
        PAGE.format(title="Tuning", body="Raise the spindle speed to frobnicate faster.")
    )
    (root / "_static" / "site.css").write_text(
        "/* HACK: the docbook xsl sheets put the title in a table */\nbody { color: #333 }\n"
    )
    (root / "_static" / "jquery.js").write_text("/*! jQuery v3 */\nfunction $(s) { return s }\n")
    (root / "searchindex.js").write_text('Search.setIndex({"docnames": ["index", "tuning"]})\n')
    (root / "_static" / "site.css.map").write_text('{"version": 3, "sources": []}\n')
    (root / "_static" / "logo.svg").write_text("<svg><title>logo</title></svg>\n")
    return root


def test_a_site_walk_passes_over_its_assets(tmp_path: Path) -> None:
    report = walk(_site(tmp_path / "site"))
    assert sorted(f.relpath for f in report.files) == ["index.html", "tuning.html"]
    assert sorted(report.skipped_other) == [
        "_static/jquery.js",
        "_static/logo.svg",
        "_static/site.css",
        "_static/site.css.map",
        "searchindex.js",
    ]


def test_scripts_without_html_pages_are_read_as_code(tmp_path: Path) -> None:
    # A JavaScript project: its .js files are what the user wants indexed (the style sheet
    # is still a page asset).
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "app.js").write_text("// Start the frobnicator server\nfunction start() {}\n")
    (proj / "theme.css").write_text("body { color: red }\n")
    entries, report = scan(proj)
    assert [e.relpath for e in entries] == ["app.js"]
    assert report.skipped_other == ["theme.css"]


def test_the_skip_list_is_the_clients_to_set(bow, tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    with Treehop(embedder=bow, tagger=None) as th:
        res = th.add_resource(site, target_uri="viking://resources/site")
        assert res.files == 2 and "_static/site.css" in res.skipped_other
        overview = th.stat("viking://resources/site").overview
        assert "HACK" not in overview and "site css" not in overview
    with Treehop(embedder=bow, tagger=None, skip_suffixes=()) as th:
        res = th.add_resource(site, target_uri="viking://resources/site")
        assert res.files == 7 and res.skipped_other == []
    with Treehop(embedder=bow, tagger=None, skip_suffixes=[".HTML"]) as th:
        res = th.add_resource(site, target_uri="viking://resources/site")
        assert "index.html" in res.skipped_other and "_static/site.css" not in res.skipped_other


def test_a_file_named_by_itself_is_read_whatever_its_suffix(bow, tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    with Treehop(embedder=bow, tagger=None) as th:
        res = th.add_resource(site / "_static" / "site.css", target_uri="viking://resources/css")
        assert res.files == 1
        assert "docbook" in th.read("viking://resources/css")


def test_a_re_add_drops_what_the_skip_list_now_skips(bow, tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    with Treehop(tmp_path / "idx", embedder=bow, tagger=None, skip_suffixes=()) as th:
        th.add_resource(site, target_uri="viking://resources/site")
        assert th.stat("viking://resources/site/_static/site.css").is_leaf
    with Treehop(tmp_path / "idx", embedder=bow, tagger=None) as th:
        res = th.add_resource(site, target_uri="viking://resources/site")
        assert res.deleted >= 5
        with pytest.raises(NotFoundError):
            th.stat("viking://resources/site/_static/site.css")
        # the folder left with no file goes too (no empty `_static` with a CSS abstract)
        assert [e.uri for e in th.ls("viking://resources/site")] == [
            "viking://resources/site/index.html",
            "viking://resources/site/tuning.html",
        ]


@pytest.mark.parametrize("bad", [".css", "css", [".c ss"], [3], ["." + "x" * 40], {".css": 1}])
def test_a_bad_skip_list_is_refused_before_anything_opens(bow, bad: object) -> None:
    with pytest.raises(
        InvalidQueryError, match=r"skip_suffixes.*(not a file suffix|list of file suffixes)"
    ):
        Treehop(embedder=bow, tagger=None, skip_suffixes=bad)  # type: ignore[arg-type]


def test_the_default_list_is_documented() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "ingest.md").read_text()
    for s in sorted(loaders.SKIP_SUFFIXES):
        assert f"`{s}`" in doc, s


def test_the_cli_takes_a_skip_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = _site(tmp_path / "site")
    idx = str(tmp_path / "idx")
    assert main(["--index", idx, "index", str(site), "--skip-suffixes", ".svg"]) == 0
    out = capsys.readouterr().out
    assert "_static/site.css" not in out  # read: not in the skipped list
    assert "skipped 1 page asset (a style sheet, script or Sphinx source copy; " in out, out
    assert "_static/logo.svg" in out
    assert main(["--index", str(tmp_path / "idx3"), "index", str(site)]) == 0
    out = capsys.readouterr().out
    assert "skipped 5 page assets (" in out and "other files" not in out, out
    code = main(["--index", str(tmp_path / "idx2"), "index", str(site), "--skip-suffixes", "css"])
    assert code == ExitCode.USAGE
    assert "--skip-suffixes" in capsys.readouterr().err
    assert not (tmp_path / "idx2").exists()


# ------------------------------------------------------------------ the folder's abstract
def test_a_folder_is_called_by_its_index_page_title(bow, tmp_path: Path) -> None:
    site = _site(tmp_path / "en")
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(site, target_uri="viking://resources/manual")
        abstract = th.stat("viking://resources/manual").abstract
        assert abstract.startswith("Frobnicator Operator Manual: "), abstract
        assert not abstract.startswith("en:")


def test_a_readme_with_a_heading_names_its_folder(bow, tmp_path: Path) -> None:
    d = tmp_path / "pkg-x"
    d.mkdir()
    (d / "README.md").write_text("# Spindle Handbook\n\nHow to keep a spindle turning.\n")
    (d / "oil.md").write_text("# Oil\n\nOil it weekly.\n")
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(d, target_uri="viking://resources/pkg-x")
        abstract = th.stat("viking://resources/pkg-x").abstract
        assert abstract == "Spindle Handbook: How to keep a spindle turning."
        # the parent's overview still lists it by its name
        assert "- pkg x: Spindle Handbook" in th.stat("viking://resources").overview


def test_a_readme_without_a_heading_keeps_the_folder_name(bow, tmp_path: Path) -> None:
    d = tmp_path / "notes"
    d.mkdir()
    (d / "README.md").write_text("Loose notes about spindles.\n")
    (d / "oil.md").write_text("# Oil\n\nOil it weekly.\n")
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(d, target_uri="viking://resources/notes")
        assert th.stat("viking://resources/notes").abstract == (
            "notes: Loose notes about spindles."
        )


# ------------------------------------------------------------------ a file as the target
def _one_file_index(th: Treehop, tmp_path: Path) -> None:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "oil.md").write_text("# Oil\n\nOil the spindle weekly with light machine oil.\n")
    (d / "belts.md").write_text("# Belts\n\nTension the drive belt until it hums.\n")
    th.add_resource(d, target_uri="viking://resources/docs")


def test_a_file_target_that_matches_nothing_says_why(
    bow, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        _one_file_index(th, tmp_path)
        with caplog.at_level(logging.WARNING, logger="treehop"):
            res = th.find(
                "drive belt tension",
                target_uri="viking://resources/docs/oil.md",
                score_threshold=0.5,
            )
        assert not res
        msgs = [r.getMessage() for r in caplog.records if r.name.startswith("treehop")]
        assert any(
            "viking://resources/docs/oil.md" in m and "viking://resources/docs" in m for m in msgs
        ), msgs


def test_a_file_target_that_matches_is_quiet(
    bow, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        _one_file_index(th, tmp_path)
        with caplog.at_level(logging.WARNING, logger="treehop"):
            res = th.find("oil the spindle", target_uri="viking://resources/docs/oil.md")
        assert [m.uri for m in res.contexts()] == ["viking://resources/docs/oil.md"]
        assert not [r for r in caplog.records if r.name.startswith("treehop")]


def test_a_missing_file_target_is_not_found(bow, tmp_path: Path) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        _one_file_index(th, tmp_path)
        with pytest.raises(NotFoundError, match=r"oli\.md"):
            th.find("oil", target_uri="viking://resources/docs/oli.md")


# ------------------------------------------------------------------ the MCP find's text
def _guide(tmp: Path) -> Path:
    root = tmp / "docs"
    root.mkdir()
    oauth = "\n\n".join(f"oauth token scopes refresh detail {i}. " * 8 for i in range(3))
    deploy = "\n\n".join(f"kubernetes rollout readiness probes {i}. " * 8 for i in range(3))
    (root / "guide.md").write_text(f"# Guide\n\n## Tokens\n\n{oauth}\n\n## Deploying\n\n{deploy}")
    return root


async def test_the_mcp_find_answers_the_slots_passage(tmp_path: Path) -> None:
    """The MCP ``find`` answered each hit's face chunk alone (``MatchedContext.text``), where
    LangChain's ``page_content`` and ``assemble_context`` give the slot's passage: over
    Debian's developers-reference, "how do I orphan a package" reached an agent as "More
    information is on the WNPP web pages." (the section's last line) without the section."""
    from mcp import Client

    from treehop import AsyncTreehop
    from treehop.mcp_server import build_server

    from treehop_test_doubles import BagOfWordsEmbedder

    kw = {"embedder": BagOfWordsEmbedder(), "tagger": None, "chunk_chars": 300}
    with Treehop(tmp_path / "idx", **kw) as th:
        th.add_resource(_guide(tmp_path), target_uri="viking://resources/docs")
        expected = th.find("oauth token scopes refresh", limit=3).resources[0]
    assert expected.slot_text != expected.text  # the premise: a slot of several chunks
    a = AsyncTreehop(tmp_path / "idx", **kw)
    try:
        async with Client(build_server(a)) as client:
            res = await client.call_tool(
                "find", {"query": "oauth token scopes refresh", "limit": 3}
            )
            assert not res.is_error, res.content
            top = (res.structured_content or {})["hits"][0]
            assert top["uri"] == expected.uri
            assert top["text"] == expected.slot_text
            assert "truncated" not in top
            cut = await client.call_tool(
                "find", {"query": "oauth token scopes refresh", "limit": 1, "text_chars": 50}
            )
            assert (cut.structured_content or {})["hits"][0]["truncated"] is True
    finally:
        await a.close()


def test_the_cli_find_prints_each_hits_passage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``treehop find`` showed a chunk's heading path cut to the terminal and nothing of its
    text; ``--text`` prints the passage the retrievers return (``slot_text``)."""
    idx = str(tmp_path / "idx")
    assert main(["--index", idx, "index", str(_guide(tmp_path))]) == 0
    capsys.readouterr()
    q = "oauth token scopes refresh"
    assert main(["--index", idx, "find", q, "--limit", "2", "--text"]) == 0
    out = capsys.readouterr().out
    with Treehop(idx) as th:
        hits = th.find(q, limit=2).contexts()
    for i, m in enumerate(hits, 1):
        assert f"--- {i}. {m.uri}\n{m.slot_text.rstrip()}\n" in out, out
    assert main(["--index", idx, "find", q, "--limit", "1", "--text", "--text-chars", "30"]) == 0
    out = capsys.readouterr().out
    assert f"--- 1. {hits[0].uri}\n{hits[0].slot_text[:30].rstrip()} [...]\n" in out, out
    assert main(["--index", idx, "find", q, "--limit", "1"]) == 0
    assert "--- 1." not in capsys.readouterr().out  # without --text: the table alone


def test_the_file_target_warning_redacts_a_registered_secret(
    bow, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The hint goes through the ``treehop`` logger, whose redacting filter
    (:func:`treehop.redaction.install_log_filter`) a child logger's records would bypass."""
    from treehop.redaction import install_log_filter, register_secret

    secret = "sk-usage72-Zq8dRt5vXw2"
    install_log_filter()
    register_secret(secret)
    with Treehop(embedder=bow, tagger=None) as th:
        d = tmp_path / "docs"
        d.mkdir()
        (d / f"{secret}.md").write_text("# Oil\n\nOil the spindle weekly.\n")
        th.add_resource(d, target_uri="viking://resources/docs")
        with caplog.at_level(logging.WARNING, logger="treehop"):
            th.find("belts", target_uri=f"viking://resources/docs/{secret}.md", score_threshold=0.9)
    msgs = [r.getMessage() for r in caplog.records if r.name.startswith("treehop")]
    assert msgs and all(secret not in m for m in msgs), msgs


# ------------------------------------------------------------------ properties

_NAMES = st.lists(
    st.tuples(
        st.sampled_from(["", "a/", "_static/", "_sources/", "b/_sources/", "c/d/"]),
        st.text(alphabet="abcXY_-", min_size=1, max_size=6),
        st.sampled_from([".html", ".HTM", ".css", ".CSS", ".js", ".md", ".txt", ".rst.txt", ""]),
    ).map("".join),
    max_size=30,
    unique=True,
)


@settings(max_examples=200, deadline=None)
@given(_NAMES)
def test_the_walks_skip_keeps_exactly_what_the_rule_says(rels: list[str]) -> None:
    from treehop.ingest.loaders import LoadReport, drop_skipped_suffixes

    report = LoadReport()
    keep = drop_skipped_suffixes(rels, loaders.SKIP_SUFFIXES, report)
    kept = rels if keep is None else [r for r, k in zip(rels, keep.tolist(), strict=True) if k]
    site = any(r.lower().endswith((".html", ".htm", ".xhtml")) for r in rels)

    def skipped(r: str) -> bool:
        ext = r[r.rfind(".") :].lower() if "." in r.rsplit("/", 1)[-1] else ""
        if ext in {".css", ".scss", ".sass", ".less", ".map", ".svg"}:
            return True
        if site and ext in {".js", ".mjs"}:
            return True
        return site and ext == ".txt" and (r.startswith("_sources/") or "/_sources/" in r)

    assert kept == [r for r in rels if not skipped(r)]
    assert sorted(report.skipped_other) == sorted(r for r in rels if skipped(r))
    assert drop_skipped_suffixes(rels, frozenset(), LoadReport()) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=8) | st.text(max_size=10) | st.integers())
def test_a_skip_list_is_a_set_of_suffixes_or_an_invalid_query(value: object) -> None:
    from treehop.ingest.loaders import check_skip_suffixes

    try:
        out = check_skip_suffixes(value)
    except InvalidQueryError as e:
        assert "skip_suffixes" in str(e)
        return
    assert isinstance(value, list)
    assert out == {s.lower() for s in value}
    for s in out:
        assert s.startswith(".") and 2 <= len(s) <= 32 and s.isascii() and s == s.lower()
