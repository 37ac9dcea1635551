"""The ``curl-faq`` natural-question set (``bench/natural_sets.py``), its plain-text FAQ
parser, its roff converter and the question-leak check (``bench/check_question_leaks.py``) on
small inline texts shaped like Debian's ``libcurl4-doc`` (``FAQ.gz``: a banner, a contents
list of every question, a line of ``=``, numbered sections of ``N.M`` questions; notes beside
it; libcurl's roff man pages) in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model.

What the set's numbers rest on: no question's text is left in any file (the contents list,
a note quoting one aside); each answer is exactly the text under its question, a sub-entry
included, the next question or section excluded; a numbered line is a question only in its
own section with blank lines around it; ids are the authors' numbers; an answer too short to
judge leaves the set but not the corpus's scrubbing; the halves hold when an entry is added.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_WHAT = "What is cURL?"
Q_RESUME = "How do I tell curl to resume a transfer?"
Q_CERTS = "What certificates do I need when I use SSL?"
Q_LIST = "How do I list the root directory of an FTP server?"
Q_CODE = "Why do I get return code XXX from an HTTP server?"
Q_VERIFY = 'Why do I get "certificate verify failed" ?'
Q_GPL = "I have a GPL program, can I use the libcurl library?"
Q_WHO = "Who wrote PHP/CURL?"
Q_C89 = "Why does curl use C89?"

FAQ_TEXT = f"""                                  _   _ ____  _
                              ___| | | |  _ \\| |
                             / __| | | | |_) | |

FAQ

 1. Philosophy
  1.1 {Q_WHAT}
  1.2 An empty entry

 3. Usage Problems
  3.2 {Q_RESUME}
  3.16 {Q_CERTS}
  3.17 {Q_LIST}

 4. Running Problems
  4.5 {Q_CODE}
   4.5.1 "400 Bad Request"
  4.12 {Q_VERIFY}

 6. License Issues
  6.1 {Q_GPL}

 7. PHP/CURL Issues
  7.2 {Q_WHO}

 8. Development
  8.1 {Q_C89}

==============================================================================

1. Philosophy

  1.1 {Q_WHAT}

  cURL is the name of the project. The name is a play on 'Client for URLs'.

    libcurl

      A client-side URL transfer library.

  1.2 An empty entry

3. Usage problems

  3.2 {Q_RESUME}

  curl supports resumed transfers both ways on both FTP and HTTP.
  Try the -C option.

  3.3 and the -C option
  in the manual say more.

  3.16 {Q_CERTS}

  Server certificate verification is enabled by default and is often the reason
  for problems as explained in FAQ entry
  4.12 and the SSLCERTS document. See also "{Q_LIST}" below.

  3.17 {Q_LIST}

  curl lists the directory when the URL ends with a slash: ftp://host/%2f/

4. Running Problems

  4.5 {Q_CODE}

  RFC2616 clearly explains the return codes. This is a short transcript:

    4.5.1 "400 Bad Request"

    The request could not be understood by the server due to malformed syntax.

  4.12 {Q_VERIFY}

  It means that curl could not verify that the server's certificate was good.

6. License Issues

  curl and libcurl are released under a MIT/X derivative license.

  6.1 {Q_GPL}

  Yes

7. PHP/CURL Issues

  7.2 {Q_WHO}

  PHP/CURL was initially written by Sterling Hughes.

8. Development

 8.1 {Q_C89}

 We started out using C89 in the 1990s because that was the only way to write
 a truly portable C program.
"""

ROFF_PAGE = r""".\" **************************************************************************
.\" *  Project                     ___| | | |  _ \| |
.\"
.TH CURLOPT_WRITEDATA 3 "January 02, 2023" "libcurl 7.88.1" "curl_easy_setopt options"

.SH NAME
CURLOPT_WRITEDATA \- pointer passed to the write callback
.SH SYNOPSIS
.nf
#include <curl/curl.h>

CURLcode curl_easy_setopt(CURL *handle, CURLOPT_WRITEDATA, void *pointer);
.fi
.SH DESCRIPTION
A data \fIpointer\fP to pass to the write callback, as \fBfwrite(3)\fP's \(aqFILE *\(aq.
.IP "CURLE_OK"
All fine.
.TP
.B CURLE_BAD
Not fine\&.
.RS
.br
.RE
.SH "SEE ALSO"
.BR CURLOPT_WRITEFUNCTION "(3), " CURLOPT_READDATA "(3), "
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


# -- the parser --------------------------------------------------------------------------------


def test_split_curl_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_curl_faq(FAQ_TEXT)
    # 1.2 has no text under it: no question (its line leaves all the same)
    assert [key for key, _, _ in qa] == [
        "1.1",
        "3.2",
        "3.16",
        "3.17",
        "4.5",
        "4.12",
        "6.1",
        "7.2",
        "8.1",
    ]
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["1.1"] == (
        Q_WHAT,
        "cURL is the name of the project. The name is a play on 'Client for URLs'.\n\n"
        "  libcurl\n\n    A client-side URL transfer library.",
    )
    # a numbered line without a blank line after it is answer text
    assert by_key["3.2"][1] == (
        "curl supports resumed transfers both ways on both FTP and HTTP.\nTry the -C option."
        "\n\n3.3 and the -C option\nin the manual say more."
    )
    # a line numbered for another section inside an answer is answer text
    assert "FAQ entry\n4.12 and the SSLCERTS document" in by_key["3.16"][1]
    assert (
        by_key["3.17"][1]
        == "curl lists the directory when the URL ends with a slash: ftp://host/%2f/"
    )
    # a sub-entry is a sub-section of its question's answer
    assert by_key["4.5"][1] == (
        "RFC2616 clearly explains the return codes. This is a short transcript:\n\n"
        '### 4.5.1 "400 Bad Request"\n\n'
        "The request could not be understood by the server due to malformed syntax."
    )
    # a section's preamble belongs to no answer; an answer may be one word
    assert by_key["6.1"] == (Q_GPL, "Yes")
    assert by_key["8.1"][1].startswith("We started out using C89")  # indented one space
    lines = text.split("\n")
    assert lines[0] == "# curl FAQ"
    assert "## 3. Usage problems" in lines and "## 8. Development" in lines
    assert "curl and libcurl are released under a MIT/X derivative license." in lines
    for key, q, a in qa:
        assert a in text
        assert f"{key} {q}" not in lines and q not in text.replace(f'"{Q_LIST}"', "")
    assert "An empty entry" not in text and "_ \\| |" not in text  # contents and banner gone
    assert "\n\n\n" not in text


def test_split_curl_faq_repeated_number_gets_a_suffix() -> None:
    faq = "x\n" + "=" * 30 + "\n\n1. A\n\n  1.1 Why?\n\n  one\n\n  1.1 Why not?\n\n  two\n"
    _, qa = ns.split_curl_faq(faq)
    assert qa == [("1.1", "Why?", "one"), ("1.1-2", "Why not?", "two")]


def test_split_curl_faq_refuses_a_text_without_the_contents_rule() -> None:
    with pytest.raises(ValueError, match="not a curl-style FAQ"):
        ns.split_curl_faq("1. A\n\n  1.1 Why?\n\n  one\n")


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:", max_size=20),
    st.just(""),
    st.just(""),
    st.just("=" * 30),
    st.builds(lambda n, t: f"{n}. {t}", st.integers(0, 3), st.text("abc ", min_size=1, max_size=8)),
    st.builds(
        lambda pad, a, b, t: f"{' ' * pad}{a}.{b} {t}",
        st.integers(0, 6),
        st.integers(0, 3),
        st.integers(0, 30),
        st.text(alphabet="abcd ?", min_size=1, max_size=20),
    ),
    st.builds(
        lambda a, b, c, t: f"    {a}.{b}.{c} {t}",
        st.integers(0, 3),
        st.integers(0, 5),
        st.integers(0, 5),
        st.text(alphabet="abc ", min_size=1, max_size=10),
    ),
    st.builds(lambda t: "    " + t, st.text(alphabet="abc1.? ", max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_split_curl_faq_answers_are_in_the_page_and_questions_are_not(lines: list[str]) -> None:
    faq = "\n".join(["banner", "=" * 30, *lines])
    text, qa = ns.split_curl_faq(faq)
    assert text.startswith("# curl FAQ\n") and "\n\n\n" not in text
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    assert len(qa) <= sum(1 for line in lines if re.match(r"^\s*\d+\.\d+\s+\S", line))
    out = text.split("\n")
    for key, q, a in qa:
        assert re.fullmatch(r"\d+\.\d+(-\d+)?", key) and q.strip() and a.strip()
        assert a in text
        number = key.split("-")[0]
        # the question's own line left the page (a copy elsewhere stays answer text only
        # when the parser did not take it as a question: then it is not this one)
        asked = sum(1 for line in lines if ns._norm(line) == f"{number} {q}")
        kept = sum(1 for line in out if ns._norm(line) == f"{number} {q}")
        assert kept < asked


# -- roff and the pages the FAQ names ----------------------------------------------------------


def test_roff_page_markdown_keeps_the_text_a_reader_sees() -> None:
    md = ns.roff_page_markdown(ROFF_PAGE)
    assert md == (
        "# CURLOPT_WRITEDATA(3)\n\n"
        "## NAME\n\nCURLOPT_WRITEDATA - pointer passed to the write callback\n\n"
        "## SYNOPSIS\n\n```\n#include <curl/curl.h>\n\n"
        "CURLcode curl_easy_setopt(CURL *handle, CURLOPT_WRITEDATA, void *pointer);\n```\n\n"
        "## DESCRIPTION\n\n"
        "A data pointer to pass to the write callback, as fwrite(3)'s 'FILE *'.\n\n"
        "CURLE_OK\n\nAll fine.\n\nCURLE_BAD\n\nNot fine.\n\n"
        "## SEE ALSO\n\nCURLOPT_WRITEFUNCTION(3), CURLOPT_READDATA(3),\n"
    )
    # an unclosed example is closed; a backslash escape is one backslash
    assert ns.roff_page_markdown(".nf\na \\\\n b") == "```\na \\n b\n```\n"


def test_curl_named_pages_are_whole_words_of_the_answers() -> None:
    names = ["CURLOPT_WRITEDATA", "CURLOPT_WRITE", "libcurl", "libcurl-tutorial", "curl_easy_init"]
    text = "Set CURLOPT_WRITEDATA; libcurl calls it (see libcurl-tutorial), not curl_easy_init_x."
    assert ns.curl_named_pages(text, names) == ["CURLOPT_WRITEDATA", "libcurl", "libcurl-tutorial"]


# -- the set, built from a package tree shaped like Debian's libcurl4-doc -------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_TEXT) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.CURL_PACKAGE, "7.88.1-10+deb12u15")
    doc = root / ns.CURL_DOC
    (doc / "examples").mkdir(parents=True)
    write_gz(doc / ns.CURL_FAQ, faq)
    (doc / "README").write_text("README\n\nCurl is a command line tool for transferring data.\n")
    write_gz(doc / "SSLCERTS.md.gz", f"# SSL Certificate Verification\n\n{Q_CERTS} Read on.\n")
    (doc / "HTTP2.md").write_text("HTTP/2 with curl\n================\n\nUse --http2.\n")
    write_gz(doc / "TODO.gz", "x" * (ns.MAX_LINKED_CHARS + 1))  # over the cap: named, left out
    write_gz(doc / "THANKS.gz", "Everyone.\n")
    (doc / "examples" / "simple.c").write_text("int main(void) { return 0; }\n")
    man = root / ns.CURL_MAN
    write_gz(man / "CURLOPT_WRITEDATA.3.gz", ROFF_PAGE)
    write_gz(man / "curl_easy_init.3.gz", ".TH curl_easy_init 3\n.SH NAME\ncurl_easy_init\n")
    return doc


def test_curl_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(
        tmp_path,
        monkeypatch,
        FAQ_TEXT.replace("Try the -C option.", "Try -C or CURLOPT_WRITEDATA."),
    )
    nset = ns.curl_faq_set()
    assert [q.qid for q in nset.questions] == [
        "curl-faq:1.1",
        "curl-faq:3.2",
        "curl-faq:3.16",
        "curl-faq:3.17",
        "curl-faq:4.5",
        "curl-faq:4.12",
        "curl-faq:7.2",
        "curl-faq:8.1",
    ]
    assert nset.left_out == (Q_GPL,)  # "Yes": under the judge's shingle
    # the notes as text; the man page an answer names, converted; THANKS, examples, the
    # page no answer names and the note over the cap out
    assert set(nset.files) == {
        "FAQ.md",
        "README",
        "SSLCERTS.md",
        "HTTP2.md",
        "man3/CURLOPT_WRITEDATA.md",
    }
    assert nset.files["man3/CURLOPT_WRITEDATA.md"] == ns.roff_page_markdown(ROFF_PAGE)
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert " ".join(q.text.split()).lower() not in corpus
        assert q.answers[0][0] in nset.files["FAQ.md"]
        assert len(q.answers[0][0].split()) >= ns.MIN_ANSWER_WORDS
    # a note quoting a question is scrubbed, and so is an answer quoting another question
    assert nset.files["SSLCERTS.md"] == "# SSL Certificate Verification\n\n Read on.\n"
    answer = {q.qid: q.answers[0][0] for q in nset.questions}["curl-faq:3.16"]
    assert 'See also "" below.' in answer
    nsc.assert_files_as_written(nset)
    assert "7.88.1-10+deb12u15" in nset.note
    assert "the 3 other notes" in nset.note and "the 1 man pages" in nset.note
    assert "the other 1 man pages" in nset.note and "TODO.gz" in nset.note
    assert "THANKS.gz" in nset.note and Q_GPL in nset.note
    nsc.assert_held_out("curl-faq")


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds nothing, and finds the copies in the FAQ as shipped
    (its contents list and question lines: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.curl_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == 9
    assert cql.find_leaks(nset.files, asked, False) == []
    leaks = cql.find_leaks({"FAQ": FAQ_TEXT}, asked, False)
    assert {lk.question for lk in leaks if lk.kind == "exact"} == set(asked)


def test_curl_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.curl_faq_set)
    more = FAQ_TEXT.replace(
        "3. Usage problems\n",
        "3. Usage problems\n\n  3.1 Does curl support SOCKS?\n\n  Yes, SOCKS4 and SOCKS5 both.\n",
    )
    write_gz(doc / ns.CURL_FAQ, more)
    nsc.assert_halves_kept(ns.curl_faq_set, first, dev, test)


def test_curl_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.CURL_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.gz under"):
        ns.curl_faq_set()
