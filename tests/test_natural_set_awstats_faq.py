"""The ``awstats-faq`` natural-question set (``bench/natural_sets.py``), its reading of
AWStats' HTML FAQ and the question-leak check (``bench/check_question_leaks.py``) on a small
inline FAQ shaped as Debian's ``awstats`` ships it (``html/awstats_faq.html``: the manual's
banner, a title, a contents list of ``FAQ-XXXnnn <a href="#...">title</a><br>`` lines under
group titles, a rule; entries of an anchor over a bold underlined capitals title, an "ABOUT"
entry with no problem, ``PROBLEM:`` / ``SOLUTION:`` entries whose problem is wrapped, holds
``<i>``, ``&quot;``, ``&amp;`` and a "< SCRIPT >" that is text, whose solution holds a link
and a command table; two titles over one entry; a problem nobody solved; a rule and the
author's links after the last entry) beside the manual's other pages (one quoting a
question, one over the limit, ``index.html``), the READMEs, the example Apache configuration
and the man page, in a package tree laid out as the package unpacks (marker present,
nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no asked problem, its entry's titles or the contents list's
line for it is left in any file; each answer is exactly the text after ``SOLUTION:`` up to
the next entry; ids are the FAQ's codes, so an entry added keeps the halves; an answer too
short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_OLD = "I want to process an old log file to include its data in my AWStats reports."
Q_DOLLAR = (
    "When I run awstats.pl from command line, I get: "
    '"Missing $ on loop variable at awstats.pl line xxx"'
)
Q_500 = (
    "AWStats seems to run fine at the command prompt but when ran as a CGI from a browser, "
    'I get an "Internal Error 500". I also might have the following message in my Apache error '
    "log file (or in browser with Apache 2.0+): ...couldn't create/spawn child process: "
    "c:/cgi-bin/awstats.pl"
)
Q_XSS = (
    "If a bad user use a browser to make a hit on an URL that include a < SCRIPT > ... < /SCRIPT > "
    "section in its parameter, does the script & its code will be executed ?"
)
Q_RESET = "I want to reset all my statistics to restart the update process from the beginning."
FAQ = """<html>
<head>
<title>AWStats Documentation - FAQs</title>
</head>
<body topmargin=10 leftmargin=5>
<table cellpadding=0 cellspacing=0 border=0 bgcolor=#FFFFFF width=100%>
<tr><td bgcolor=#9999cc align=center><b>AWStats logfile analyzer 7.8 Documentation</b></td></tr>
</table>
<br><br><H1 style="font: 26px arial">Frequently Asked Questions + Troubleshooting</H1>
<br>
<u>ABOUT QUESTIONS:</u><br>
<ul>
FAQ-ABO100 <a href="#SERVERSOS">Which server log files or operating systems are supported ?</a><br>
</ul>
<u>COMMON SETUP/USAGE QUESTIONS:</u><br>
Here, you can find the most common questions and answers about AWStats setup/usage process.<br>
<ul>
FAQ-COM350 <a href="#OLDLOG">How can I process old log file ?</a><br>
FAQ-COM500 <a href="#RESET">How can I reset all my statistics ?</a><br>
FAQ-COM999 <a href="#NOSOL">A problem nobody solved here ?</a><br>
</ul>
<u>ERRORS/TROUBLESHOOTING QUESTIONS:</u><br>
<ul>
FAQ-SET050 <a href="#MISSINGDOLLAR">Error "Missing $ on loop variable ..."</a><br>
FAQ-SET150 <a href="#SPAWNERROR">Error "...couldn't spawn child process..." on windows.</a><br>
FAQ-SET200 <a href="#INTERNAL">"Internal Error" or "Error 500" in a browser.</a><br>
FAQ-SEC100 <a href="#CSSATTACK">Can AWStats be used to make Cross Site Scripting Attacks ?</a><br>
</ul>
<br>

<hr>
<br><br>


<a name="SERVERSOS"></a><br>
<b><u>FAQ-ABO100 : WHICH SERVER LOG FILES OR OS ARE SUPPORTED ?</u></b><br>
AWStats can works with :<br>
<li> All web server able to write log file with a <u>combined log format (XLF/ELF)</u>.<br>
Because AWStats is in Perl, it can works on all Operating Systems.<br>

<hr><br>


<a name="OLDLOG"></a><br>
<b><u>FAQ-COM350 : HOW CAN I PROCESS AN OLD LOG FILE ?</u></b><br>
<font class=CProblem>PROBLEM:</font><br>
I want to process an old log file to include its data in my AWStats
reports.<br>
<font class=CSolution>SOLUTION:</font><br>
You must reset your statistics (see <a href="#RESET">FAQ-COM500</a>) and restart
the update processes from the oldest log file to the newest.<br>
<br>

<a name="RESET"></a><br>
<b><u>FAQ-COM500 : HOW CAN I RESET ALL MY STATISTICS ?</u></b><br>
<font class=CProblem>PROBLEM:</font><br>
I want to reset all my statistics to restart the update process from the beginning.<br>
<font class=CSolution>SOLUTION:</font><br>
Delete all files awstatsMMYYYY.txt in the DirData directory:<br>
<table border=1 cellpadding=1 cellspacing=0 class=CFAQ><tr class=CFAQ><td class=CFAQ>
rm /var/lib/awstats/awstats*.txt
</td></tr></table>
<br>

<a name="NOSOL"></a><br>
<b><u>FAQ-COM999 : A PROBLEM NOBODY SOLVED HERE ?</u></b><br>
<font class=CProblem>PROBLEM:</font><br>
My reports show the wrong week days since the last upgrade of the server.<br>
<br>

<hr><br>


<a name="MISSINGDOLLAR"></a><br>
<b><u>FAQ-SET050 : ERROR "MISSING $ ON LOOP VARIABLE ..."</u></b><br>
<font class=CProblem>PROBLEM:</font><br>
When I run awstats.pl from command line, I get:<br>
<i>&quot;Missing $ on loop variable at awstats.pl line xxx&quot;</i><br>
<font class=CSolution>SOLUTION:</font><br>
Problem is in your Perl interpreter. Try to install or reinstall a more recent/stable
Perl interpreter.<br>
<br>

<a name="SPAWNERROR"></a><a name="INTERNAL"></a><br>
<b><u>FAQ-SET150 : INTERNAL ERROR 500 IN MY BROWSER</u></b><br>
<b><u>FAQ-SET200 : ERROR "... COULDN'T CREATE/SPAWN CHILD PROCESS..."</u></b><br>
<font class=CProblem>PROBLEM:</font><br>
AWStats seems to run fine at the command prompt but when ran as a CGI from a browser,
I get an <i>"Internal Error 500"</i>.<br>
I also might have the following message in my Apache error log file
(or in browser with Apache 2.0+):<br>
<i>...couldn't create/spawn child process: c:/cgi-bin/awstats.pl</i><br>
<font class=CSolution>SOLUTION:</font><br>
Tell Apache where your external Perl interpreter is: add to <b>httpd.conf</b><br>
<table border=1 cellpadding=1 cellspacing=0 class=CFAQ><tr class=CFAQ><td class=CFAQ>
ScriptInterpreterSource registry
</td></tr></table>
Then restart Apache.<br>
<br>

<a name="CSSATTACK"></a><br>
<b><u>FAQ-SEC100 : CAN AWSTATS BE USED TO MAKE CROSS SITE SCRIPTING ATTACKS ?</u></b><br>
<font class=CProblem>PROBLEM:</font><br>
If a bad user use a browser to make a hit on an URL that include a < SCRIPT > ... < /SCRIPT >
section in its parameter, does the script &amp; its code will be executed ?<br>
<font class=CSolution>SOLUTION:</font><br>
No. AWStats use a filter to remove all scripts codes that was included in an URL.<br>
<br>

<hr>

<!-- BEGIN_SOCIAL_NETWORKS -->
<div class="htmldoc-ignore">
Article written by Laurent Destailleur.<br>
</div>
<!-- END_SOCIAL_NETWORKS -->
</body>
</html>
"""
A_OLD = (
    "You must reset your statistics (see FAQ-COM500) and restart the update processes from "
    "the oldest log file to the newest."
)
A_RESET = (
    "Delete all files awstatsMMYYYY.txt in the DirData directory:\n\n"
    " |  rm /var/lib/awstats/awstats*.txt"
)
A_DOLLAR = (
    "Problem is in your Perl interpreter. Try to install or reinstall a more recent/stable "
    "Perl interpreter."
)
A_500 = (
    "Tell Apache where your external Perl interpreter is: add to httpd.conf\n\n"
    " |  ScriptInterpreterSource registry\n\n"
    " Then restart Apache."
)
A_XSS = "No. AWStats use a filter to remove all scripts codes that was included in an URL."
ASKED = (Q_OLD, Q_RESET, Q_DOLLAR, Q_500, Q_XSS)
ANSWERS = {
    "FAQ-COM350": A_OLD,
    "FAQ-COM500": A_RESET,
    "FAQ-SET050": A_DOLLAR,
    "FAQ-SET150": A_500,
    "FAQ-SEC100": A_XSS,
}
UNSOLVED = "My reports show the wrong week days since the last upgrade of the server."


def test_split_awstats_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_awstats_faq(FAQ)
    # each PROBLEM: with a SOLUTION: after it asked, in order: the problem's words (wrapped
    # lines joined, <br> a space, <i> removed without one, entities read, "< SCRIPT >" kept
    # as the text it is); the answer the text after SOLUTION: up to the next entry; the id
    # the first title's code (SET150 over SET200)
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the contents list's lines leave the page (its group titles stay); every asked
    # entry's titles, problem and labels leave it; the ABOUT entry (no problem) and the
    # unsolved one stay whole, titles included, in no answer; the banner and title stay,
    # the author's links after the last rule stay, in no answer
    for gone in ("FAQ-COM350 :", "FAQ-SET150", "FAQ-SET200", "SOLUTION:", "Cross Site"):
        assert gone not in page
    assert "How can I process old log file" not in page and "Which server log" not in page
    assert "COMMON SETUP/USAGE QUESTIONS:" in page and "ABOUT QUESTIONS:" in page
    assert "FAQ-ABO100 : WHICH SERVER LOG FILES OR OS ARE SUPPORTED ?" in page
    assert "it can works on all Operating Systems." in page
    assert "FAQ-COM999 : A PROBLEM NOBODY SOLVED HERE ?" in page and UNSOLVED in page
    assert page.count("PROBLEM:") == 1
    assert "Frequently Asked Questions + Troubleshooting" in page
    assert page.rstrip().endswith("Article written by Laurent Destailleur.")
    for _, _, a in qa:
        assert "Operating Systems" not in a and "Destailleur" not in a and UNSOLVED not in a


def test_split_awstats_faq_edges() -> None:
    # no entry: the page as markdown, nothing asked; a PROBLEM: not right under the title,
    # or a SOLUTION: without a PROBLEM:, asks nothing; a title split over two lines is
    # text; a repeated code is told apart; a problem with no text or a solution with no
    # text asks nothing
    assert ns.split_awstats_faq("<p>No entries.</p>")[1] == []
    head = "<b><u>FAQ-COM100 : T</u></b><br>\n"
    prob, sol = (
        "<font class=CProblem>PROBLEM:</font><br>\n",
        "<font class=CSolution>SOLUTION:</font>",
    )
    assert ns.split_awstats_faq(f"{head}Text first.<br>\n{prob}P?<br>\n{sol} S.\n")[1] == []
    assert ns.split_awstats_faq(f"{head}{sol} S.\n")[1] == []
    assert ns.split_awstats_faq(f"<b><u>FAQ-COM100 : T\nU</u></b>{prob}P?{sol} S.\n")[1] == []
    twice = f"{head}{prob}First?{sol} One.\n{head}{prob}Second?{sol} Two.\n"
    assert ns.split_awstats_faq(twice)[1] == [
        ("FAQ-COM100", "First?", "One."),
        ("FAQ-COM100-2", "Second?", "Two."),
    ]
    assert ns.split_awstats_faq(f"{head}{prob}<br>{sol} S.\n")[1] == []
    assert ns.split_awstats_faq(f"{head}{prob}P?{sol}<br>\n")[1] == []
    assert ns.awstats_question("a<br>b <i>&quot;c&quot;</i>.  < d > &lt;e&gt;") == (
        'a b "c". < d > <e>'
    )


_WORD = st.sampled_from(["log", "cron", "perl", "apache", "config", "update", "visits"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=1, max_value=3),  # titles over the entry
            st.sampled_from(["asked", "about", "unsolved"]),
            st.lists(_WORD, min_size=1, max_size=8),  # the problem's words
            st.booleans(),  # the problem wrapped, with <br> and <i>
            st.lists(_WORD, min_size=1, max_size=12),  # the solution's words
            st.booleans(),  # a rule after the entry (a group's end)
            st.sampled_from(["COM", "SET", "SEC"]),
        ),
        min_size=1,
        max_size=7,
    ),
    st.booleans(),  # a contents list before the first rule
)
def test_split_awstats_faq_property(
    entries: list[tuple[int, str, list[str], bool, list[str], bool, str]], contents: bool
) -> None:
    """Random entries after the contents list, each one to three titles over an asked
    problem, an "ABOUT" text or a problem nobody solved, some problems wrapped with a line
    break and italics, some entries followed by a group's rule: one question per asked
    entry, in order, its first title's code the id (repeats ``-2``), the problem read, the
    answer the solution's text, in the page; no asked problem, no title of an asked entry
    and no contents line left in it; the other entries' texts kept; the links after the
    last rule in no answer."""
    text = "<h1>Frequently Asked Questions</h1>\n<ul>\n"
    for n, (_, _, words, *_rest) in enumerate(entries):
        if contents:
            text += f'FAQ-COM{n:03d} <a href="#A{n}">contentsline{n}x {" ".join(words)} ?</a><br>\n'
    text += "</ul>\n<hr>\n"
    expected = []
    seen: dict[str, int] = {}
    kept = []
    for n, (titles, kind, pwords, wrapped, swords, rule, group) in enumerate(entries):
        code = f"FAQ-{group}{n % 3:03d}"
        text += f'<a name="A{n}"></a><br>\n'
        for t in range(titles):
            text += (
                f"<b><u>{code if t == 0 else 'FAQ-SET' + str(900 + t)} : TITLE{n}X{t}</u></b><br>\n"
            )
        problem = " ".join([f"entry{n}x", *pwords])
        solution = " ".join(["Solution", *swords])
        if kind == "about":
            text += f"about{n} {solution}<br>\n"
            kept.append(f"about{n} {solution}")
        else:
            shown = problem
            if wrapped:
                first, *rest = problem.split()
                shown = f"{first}<br>\n<i>{' '.join(rest)}</i>"
            text += f"<font class=CProblem>PROBLEM:</font><br>\n{shown}<br>\n"
            if kind == "asked":
                text += f"<font class=CSolution>SOLUTION:</font><br>\n{solution}.<br>\n<br>\n"
                seen[code] = seen.get(code, 0) + 1
                key = code if seen[code] == 1 else f"{code}-{seen[code]}"
                expected.append((key, problem, f"{solution}."))
            else:
                text += "<br>\n"
                kept.append(f"entry{n}x")
        if rule:
            text += "\n<hr><br>\n"
    text += "<hr>\n<div>Article by the author.</div>\n"
    page, qa = ns.split_awstats_faq(text)
    assert qa == expected
    for _, _, a in qa:
        assert a in page and "Article" not in a
    for k, (_, kind, *_rest) in enumerate(entries):
        if kind == "asked":
            assert f"entry{k}x" not in page and f"TITLE{k}X" not in page
        else:
            assert f"TITLE{k}X0" in page
    for words in kept:
        assert words in page
    assert "contentsline" not in page and "Article by the author." in page


# -- the set, built from a package tree shaped like Debian's awstats ------------------------


def _man(name: str, body: str) -> str:
    return f'.TH {name.upper()} 1 "2020"\n.SH NAME\n{name} \\- a program\n.SH DESCRIPTION\n{body}'


def _page(title: str, body: str) -> str:
    return (
        f"<html><head><title>{title}</title></head><body><h1>{title}</h1>\n{body}\n</body></html>\n"
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.AWSTATS_PACKAGE, "7.8-3+deb12u2")
    doc: Path = root / ns.AWSTATS_DOC
    html_dir = doc / ns.AWSTATS_HTML
    html_dir.mkdir(parents=True)
    (html_dir / ns.AWSTATS_FAQ).write_text(faq)
    (html_dir / "awstats_config.html").write_text(
        _page("Config", "<p>LogFormat: the format of your log file.</p>")
    )
    (html_dir / "awstats_security.html").write_text(
        _page("Security", f"<p>Often asked: {Q_RESET} Use one config file per site.</p>")
    )
    (html_dir / "awstats_glossary.html").write_text(
        _page("Glossary", "<p>Hit: a hit.</p>" * 15_000)
    )
    (html_dir / "index.html").write_text(_page("Index", "<p>left out</p>"))
    write_gz(html_dir / "awstats_changelog.txt.gz", "left out\n")
    write_gz(html_dir / "pad_awstats.xml.gz", "<p>left out</p>\n")
    (html_dir / "styles.css").write_text("left out\n")
    write_gz(doc / "README.md.gz", "# AWStats\n\nA log file analyzer.\n")
    write_gz(doc / "README.Debian.gz", "The Debian package runs awstats from cron.\n")
    (doc / "examples").mkdir()
    (doc / "examples/apache.conf").write_text("Alias /awstats-icon/ /usr/share/awstats/icon/\n")
    (doc / "examples/awstats_updateall.pl").write_text("left out\n")
    write_gz(doc / "NEWS.Debian.gz", "left out\n")
    write_gz(doc / "changelog.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    write_gz(root / "usr/share/man/man1/awstats.1.gz", _man("awstats", "Builds statistics.\n"))
    return html_dir


@pytest.fixture
def html_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the manual's folder."""
    return _package(tmp_path, monkeypatch)


def test_awstats_faq_set_from_a_package_tree(html_dir: Path) -> None:
    nset = ns.awstats_faq_set()
    nsc.assert_package_set(
        nset,
        "awstats-faq",
        ids=list(ANSWERS),
        files={
            "awstats_faq.md",
            "awstats_config.md",
            "awstats_security.md",
            "README.md",
            "README.Debian",
            "examples/apache.conf",
            "man/awstats.1.md",
        },
        source="awstats_faq.md",
        version="7.8-3+deb12u2",
        too_long="awstats_glossary.html",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the page quoting a question scrubbed, its other text kept; notes and man page as text
    assert "Use one config file per site." in nset.files["awstats_security.md"]
    assert Q_RESET not in nset.files["awstats_security.md"]
    assert "LogFormat: the format" in nset.files["awstats_config.md"]
    assert "Alias /awstats-icon/" in nset.files["examples/apache.conf"]
    assert "runs awstats from cron" in nset.files["README.Debian"]
    assert "Builds statistics." in nset.files["man/awstats.1.md"]
    assert nset.left_out == ()


def test_awstats_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(f"{A_XSS}<br>", "No, it is filtered.<br>")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.awstats_faq_set(), Q_XSS, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(html_dir: Path) -> None:
    # the FAQ as a browser shows it (tags out, entities read, "< SCRIPT >" text): the check
    # finds every question there, so it could fail
    shipped = {"awstats_faq.txt": ns.awstats_question(FAQ)}
    nsc.assert_leak_checked(ns.awstats_faq_set(), shipped, ASKED)


def test_awstats_faq_set_halves_are_fixed_and_disjoint(html_dir: Path) -> None:
    more = FAQ.replace(
        "<hr>\n\n<!-- BEGIN_SOCIAL",
        '<a name="DAILY"></a><br>\n<b><u>FAQ-COM600 : HOW CAN I BUILD DAILY REPORTS ?</u></b><br>\n'
        "<font class=CProblem>PROBLEM:</font><br>\n"
        "I want one report for each day of the month.<br>\n"
        "<font class=CSolution>SOLUTION:</font><br>\nRun the update with -DatabaseBreak=day and "
        "build each day's page with -day=DD.<br>\n\n<hr>\n\n<!-- BEGIN_SOCIAL",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.awstats_faq_set, lambda: (html_dir / ns.AWSTATS_FAQ).write_text(more)
    )


def test_awstats_faq_set_refuses_a_package_without_the_faq(html_dir: Path) -> None:
    (html_dir / ns.AWSTATS_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.awstats_faq_set, f"{ns.AWSTATS_HTML}/{ns.AWSTATS_FAQ}")
