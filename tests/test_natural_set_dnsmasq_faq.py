"""The ``dnsmasq-faq`` natural-question set (``bench/natural_sets.py``): dnsmasq's FAQ as
Debian's ``dnsmasq-base`` ships it (``/usr/share/doc/dnsmasq-base/FAQ.gz``: plain text,
``Q:``/``A:`` entries, questions wrapped over indented lines) read by Screen's reader
unchanged (``split_qa_faq``), beside the package's two HTML pages, its notes and its English
man page, on a small inline package tree of that shape (a question wrapped over two and three
lines, a question ending in a space, a one-word answer, two questions whose ids share their
first 40 characters, an answer holding column-0 "Addendum:" lines, a dashed rule, a quoted
question without a ``Q:`` and whitespace-only lines, an HTML page quoting a question, the
man page's translations, the changelogs and the copyright); offline, no embedding model, no
test reads the real package.

What the set's numbers rest on: every ``Q:`` entry asks, its wrapped lines joined by one
space; each answer is exactly the text after ``A:`` up to the next ``Q:``; the pages, notes
and man page the package ships beside the FAQ are the corpus, the translations, changelogs
and copyright are not; no question is left in any file; the halves are fixed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

VERSION = "2.90-4~deb12u2"

Q_PORTS = (
    "Why does dnsmasq open UDP ports >1024 as well as port 53. "
    "Is this a security problem/trojan/backdoor?"
)
Q_BSD = "I'm running on BSD and dnsmasq won't accept long options on the command line."
Q_MAIL = "Can I get email notification when a new version of dnsmasq is released?"
Q_FIRESTARTER = (
    "I'm using dnsmasq on a machine with the Firestarter firewall, and DHCP doesn't work. "
    "What's the problem?"
)
Q_SHOREWALL = (
    "I'm using dnsmasq on a machine with the shorewall firewall, and DHCP doesn't work. "
    "What's the problem?"
)
Q_VSERVER = "Can I run dnsmasq in a Linux vserver?"
Q_WIN7 = "DHCP doesn't work with windows 7 but everything else is fine."
ASKED = [Q_PORTS, Q_BSD, Q_FIRESTARTER, Q_SHOREWALL, Q_VSERVER, Q_WIN7]
A_PORTS = (
    "The high ports that dnsmasq opens are for replies from the upstream\n"
    "   nameserver(s). Queries are sent from these ports.\n"
    " \n"
    '   Addendum: dnsmasq now has the option "query-port" (-Q).'
)
A_BSD = "Most BSD systems don't support GNU getopt_long, use the short options."
A_FIRESTARTER = "Firestarter blocks the DHCP ports: add a rule to open UDP port 67."
A_SHOREWALL = "Add the dhcp option to the interface entry in the shorewall interfaces file."
A_VSERVER = (
    "Yes, as a DNS server, dnsmasq will just work in a vserver.\n\n"
    "   To use dnsmasq's DHCP function you need to give the vserver\n"
    "   extra system capabilities."
)
A_WIN7 = (
    "The Windows 7 DHCP client ignores an unknown option 252.\n\n"
    "Addendum:\n"
    "Some setups need a registry change:\n\n"
    "------------------------------------------------------------------------------\n"
    "How can I keep the same DHCP client reservation, if the MAC address changes?\n\n"
    "Set the DhcpClientIdentifier value.\n"
    "------------------------------------------------------------------------------"
)
ANSWERS = {  # ids: the questions' slugs, their first 40 characters
    "why-does-dnsmasq-open-udp-ports-1024-as": A_PORTS,
    "i-m-running-on-bsd-and-dnsmasq-won-t-acc": A_BSD,
    "i-m-using-dnsmasq-on-a-machine-with-the": A_FIRESTARTER,
    "i-m-using-dnsmasq-on-a-machine-with-the-2": A_SHOREWALL,
    "can-i-run-dnsmasq-in-a-linux-vserver": A_VSERVER,
    "dhcp-doesn-t-work-with-windows-7-but-eve": A_WIN7,
}

FAQ = (
    "Q: Why does dnsmasq open UDP ports >1024 as well as port 53.\n"
    "   Is this a security problem/trojan/backdoor?\n"
    "\n"
    "A: The high ports that dnsmasq opens are for replies from the upstream\n"
    "   nameserver(s). Queries are sent from these ports.\n"
    " \n"
    '   Addendum: dnsmasq now has the option "query-port" (-Q).\n'
    " \n"
    "Q: I'm running on BSD and dnsmasq won't accept long options on the\n"
    "   command line. \n"
    "\n"
    "A: Most BSD systems don't support GNU getopt_long, use the short options.\n"
    "\n"
    "Q: Can I get email notification when a new version of dnsmasq is\n"
    "   released?\n"
    "\n"
    "A: Yes.\n"
    "\n"
    "Q: I'm using dnsmasq on a machine with the Firestarter firewall, and\n"
    "   DHCP doesn't work. What's the problem?\n"
    "\n"
    "A: Firestarter blocks the DHCP ports: add a rule to open UDP port 67.\n"
    "\n"
    "Q: I'm using dnsmasq on a machine with the shorewall firewall, and\n"
    "   DHCP doesn't work. What's the problem?\n"
    "\n"
    "A: Add the dhcp option to the interface entry in the shorewall interfaces file.\n"
    "\n"
    "Q: Can I run dnsmasq in a Linux vserver?\n"
    "\n"
    "A: Yes, as a DNS server, dnsmasq will just work in a vserver.\n"
    "\n"
    "   To use dnsmasq's DHCP function you need to give the vserver\n"
    "   extra system capabilities.\n"
    "\n"
    "\n"
    "Q: DHCP doesn't work with windows 7 but everything else is fine.\n"
    "\n"
    "A: The Windows 7 DHCP client ignores an unknown option 252.\n"
    "\n"
    "Addendum:\n"
    "Some setups need a registry change:\n"
    "\n"
    "------------------------------------------------------------------------------\n"
    "How can I keep the same DHCP client reservation, if the MAC address changes?\n"
    "\n"
    "Set the DhcpClientIdentifier value.\n"
    "------------------------------------------------------------------------------\n"
    "\n"
)
SHIPPED = {"FAQ": FAQ}
FILES = {
    "FAQ",
    "doc.md",
    "setup.md",
    "README.Debian",
    "DBus-interface",
    "systemd_howto",
    "examples/dnsmasq.conf.example",
    "man/dnsmasq.8.md",
}
MAN = (
    ".TH DNSMASQ 8 2021-08-16\n.SH NAME\ndnsmasq \\- A lightweight DHCP and caching DNS server.\n"
    ".SH OPTIONS\n.TP\n.B \\-Q, --query-port=<query_port>\n"
    "Send outbound DNS queries from, and listen for their replies on, the specific UDP port.\n"
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package as shipped: ``FAQ.gz``; ``doc.html`` and ``setup.html`` (quoting a
    question); the four notes; the man page and its two translations; the changelogs and
    the copyright."""
    root = unpacked_package(tmp_path, monkeypatch, ns.DNSMASQ_PACKAGE, VERSION)
    doc = root / ns.DNSMASQ_DOC
    write_gz(doc / "FAQ.gz", FAQ)
    (doc / "doc.html").write_text(
        "<html><head><title>Dnsmasq - network services for small networks.</title></head>"
        "<body><h1>Dnsmasq</h1><p>Dnsmasq provides network infrastructure for small "
        "networks: DNS, DHCP, router advertisement and network boot.</p></body></html>\n",
        encoding="utf-8",
    )
    (doc / "setup.html").write_text(
        "<html><body><h2>Installation.</h2><p>Run <tt>make install</tt> as root.</p>"
        f"<p>People ask: {Q_VSERVER} See the FAQ.</p></body></html>\n",
        encoding="utf-8",
    )
    write_gz(doc / "README.Debian.gz", "Notes about the dnsmasq package.\n")
    write_gz(doc / "DBus-interface.gz", "DBus support must be enabled at compile-time.\n")
    (doc / "systemd_howto").write_text(
        "HOWTO\n=====\ndnsmasq comes with multiple systemd service instances.\n",
        encoding="utf-8",
    )
    (doc / "examples").mkdir()
    (doc / "examples/dnsmasq.conf.example").write_text(
        "# Never forward plain names (without a dot or domain part)\n#domain-needed\n",
        encoding="utf-8",
    )
    for name in ("changelog.gz", "changelog.archive.gz", "changelog.Debian.gz"):
        write_gz(doc / name, "leftout changes\n")
    (doc / "copyright").write_text("leftout\n", encoding="utf-8")
    write_gz(root / ns.DNSMASQ_MAN[0], MAN)
    for lang in ("es", "fr"):
        write_gz(root / f"usr/share/man/{lang}/man8/dnsmasq.8.gz", MAN + "leftout translation\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_dnsmasq_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.dnsmasq_faq_set()
    assert nset.name == "dnsmasq-faq"
    # every Q: entry asks, in order, wrapped lines joined by one space, the trailing space
    # off; the two firewall questions share their first 40 characters: the second gets -2
    assert [q.qid for q in nset.questions] == [f"dnsmasq-faq:{k}" for k in ANSWERS]
    assert [q.text for q in nset.questions] == ASKED
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {"FAQ"}
    assert set(nset.files) == FILES
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("dnsmasq-faq")
    faq = nset.files["FAQ"]
    assert not re.search(r"(?m)^[QA]:", faq)  # labels out with the questions
    # answers stay paragraphs apart; a left-out entry's answer stays in the page
    assert "the short options.\n\nYes.\n\nFirestarter blocks" in faq
    # the HTML pages as markdown, the page's copy of a question scrubbed, the rest kept
    assert "# Dnsmasq\n\nDnsmasq provides network infrastructure" in nset.files["doc.md"]
    setup = nset.files["setup.md"]
    assert "Installation." in setup and "People ask:" in setup and "See the FAQ." in setup
    assert nset.files["systemd_howto"].startswith("HOWTO\n=====\n")
    assert "#domain-needed" in nset.files["examples/dnsmasq.conf.example"]
    assert "compile-time" in nset.files["DBus-interface"]
    assert "Notes about the dnsmasq package." in nset.files["README.Debian"]
    man = nset.files["man/dnsmasq.8.md"]
    assert man.startswith("# DNSMASQ(8)") and "--query-port" in man and "## OPTIONS" in man
    # changelogs, copyright and the man page's translations out
    assert "leftout" not in " ".join(nset.files.values())
    assert VERSION in nset.note and "README.Debian" in nset.note and "dnsmasq.8" in nset.note
    nsc.assert_left_out(nset, Q_MAIL, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.dnsmasq_faq_set(), SHIPPED, [*ASKED, Q_MAIL])


def test_dnsmasq_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "Q: Can I run dnsmasq",
        "Q: Does dnsmasq work with OpenWrt routers?\n\nA: Yes, it is the default DNS and "
        "DHCP server there.\n\nQ: Can I run dnsmasq",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.dnsmasq_faq_set, lambda: write_gz(doc / "FAQ.gz", more)
    )


def test_dnsmasq_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "FAQ.gz").unlink()
    nsc.assert_refuses_without_faq(ns.dnsmasq_faq_set, "FAQ.gz")


_QWORD = st.sampled_from(["dnsmasq", "DHCP", "lease", "upstream", "resolv.conf", "port"])
_AWORD = st.sampled_from(["Yes,", "set", "the", "option", "--bind-interfaces", "53.", "(-Q)"])
_ALINE = st.one_of(
    st.builds(lambda w: "   " + " ".join(w), st.lists(_AWORD, min_size=1, max_size=5)),
    st.builds(lambda w: " ".join(w), st.lists(_AWORD, min_size=1, max_size=5)),
    st.sampled_from(["", " ", "Addendum:", "-" * 20, "   Second addendum: see above."]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_QWORD, min_size=0, max_size=10),  # the question's words after its tag
            st.booleans(),  # ends with "?"
            st.data(),  # where the question wraps, its trailing spaces, the gap before A:
            st.lists(_AWORD, min_size=1, max_size=5),  # the A: line's words
            st.lists(_ALINE, max_size=6),  # the answer's further lines
        ),
        min_size=1,
        max_size=6,
    )
)
def test_split_qa_faq_reads_dnsmasq_shaped_entries_property(
    entries: list[tuple[list[str], bool, st.DataObject, list[str], list[str]]],
) -> None:
    """Random FAQs shaped as dnsmasq's: each ``Q:`` question wrapped onto indented lines at
    random word breaks, ending in 0-2 spaces, 0-2 blank lines before its ``A:`` line, the
    answer's further lines indented or in column 0 ("Addendum:", a dashed rule) with blank
    and whitespace-only lines among them: every entry asks, in order, its question its words
    joined by one space; its answer exactly the text after ``A:`` up to the next ``Q:`` (ends
    stripped, blank runs made one); no ``Q:`` line and no question left in the page; every
    answer in it."""
    lines: list[str] = []
    expected: list[tuple[str, str]] = []
    for n, (words, asks, data, first, more) in enumerate(entries):
        words = [f"entry{n}x", *words]
        question = " ".join(words) + ("?" if asks else "")
        breaks = data.draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
        wrapped = "".join(
            w + ("\n   " if br and k < len(words) - 1 else " ")
            for k, (w, br) in enumerate(zip(words, breaks, strict=True))
        ).rstrip(" ")
        lines += ("Q: " + wrapped + ("?" if asks else "")).split("\n")
        lines[-1] += data.draw(st.sampled_from(["", " ", "  "]))
        lines += [""] * data.draw(st.integers(0, 2))
        lines += [f"A: {' '.join(first)}", *more]
        body = re.sub(r"\n{3,}", "\n\n", "\n".join([" ".join(first), *more])).strip()
        expected.append((question, body))
    page, qa = ns.split_qa_faq("\n".join(lines) + "\n")
    assert [(q, a) for _, q, a in qa] == expected
    assert [k for k, _, _ in qa] == [ns._slug(q).rstrip("-") for q, _ in expected]
    assert not re.search(r"(?m)^Q:", page)
    nsc.assert_page_keeps_answers(qa, page)
