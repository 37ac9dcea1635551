"""The ``vsftpd-faq`` natural-question set (``bench/natural_sets.py``), its reading of
vsftpd's plain-text ``Q)``/``A)`` FAQ and the question-leak check
(``bench/check_question_leaks.py``) on a small inline FAQ shaped as Debian's ``vsftpd``
ships it (``/usr/share/doc/vsftpd/FAQ.gz``: a title over dashes; column-0 ``Q)`` lines,
one question wrapped over a second column-0 line; answers opening ``A)``, or several
``A1)``/``A2)`` parts, one entry repeating a plain ``A)``; an unanswered entry; an answer
with no label after a blank line) beside the folder's notes, the security notes, the
example set-ups (a README quoting a question) and the two man pages (one over the page
limit), in a package tree laid out as ``vsftpd`` unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ, a note
quoting one); each answer is exactly the text under its question without the labels, up to
the next question; ids are the questions' slugs, so an added entry keeps the halves; an
answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_HOME = "Can I restrict users to their home directories?"
Q_LOCAL = "Help! Local users cannot log in."
Q_CHROOT = 'Help! What are the security implications referred to in the "chroot_local_user" option?'
Q_LIBCAP = "Help! vsftpd doesn't build, it fails with an error about being unable to find -lcap."
Q_PLAIN = "Help! Does vsftpd support FXP?"
ASKED = (Q_HOME, Q_LOCAL, Q_CHROOT, Q_LIBCAP, Q_PLAIN)
ANSWERS = {
    "can-i-restrict-users-to-their-home-direc": "Yes. You are probably after the setting:\n"
    "chroot_local_user=YES",
    "help-local-users-cannot-log-in": "There are various possible problems.\n\n"
    "By default, vsftpd disables any logins other than anonymous logins. Put\n"
    "local_enable=YES in your /etc/vsftpd.conf to allow local users to log in.\n\n"
    "vsftpd tries to link with PAM.",
    "help-what-are-the-security-implications-": "Firstly note that other ftp daemons have "
    "the same implications. It is a\ngeneric problem.",
    "help-vsftpd-doesn-t-build-it-fails-with-": "Install the libcap package and retry the "
    "build. Seems to affect Debian\nusers a lot.\n\nInstall the libcap-devel. This certainly "
    "affects Fedora.",
    "help-does-vsftpd-support-fxp": "An FTP server does not have to do anything special to "
    "support FXP.",
}

FAQ = (
    "vsftpd frequently asked questions!!\n"
    "-----------------------------------\n\n"
    f"Q) {Q_HOME}\n"
    "A) Yes. You are probably after the setting:\nchroot_local_user=YES\n\n"
    f"Q) {Q_LOCAL}\n"
    "A) There are various possible problems.\n"
    "A1) By default, vsftpd disables any logins other than anonymous logins. Put\n"
    "local_enable=YES in your /etc/vsftpd.conf to allow local users to log in.\n"
    "A2) vsftpd tries to link with PAM.\n\n"
    "Q) Help! What are the security implications referred to in the\n"
    '"chroot_local_user" option?\n'
    "A) Firstly note that other ftp daemons have the same implications. It is a\n"
    "generic problem.\n\n"
    "Q) Help! Is this entry answered at all?\n\n"
    "Q) Help! vsftpd doesn't build, it fails with an error about being unable to\n"
    "find -lcap.\n"
    "A) Install the libcap package and retry the build. Seems to affect Debian\n"
    "users a lot.\n"
    "A) Install the libcap-devel. This certainly affects Fedora.\n\n"
    f"Q) {Q_PLAIN}\n\n"
    "An FTP server does not have to do anything special to support FXP.\n"
)


def test_split_vsftpd_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_vsftpd_faq(FAQ)
    # a wrapped question read whole; labels off, a later labelled part its own paragraph;
    # an unlabelled answer after a blank line; the unanswered entry asks nothing
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    assert "answered at all" not in page
    assert "Q)" not in page and "A)" not in page and "A1)" not in page
    assert page.startswith("vsftpd frequently asked questions!!\n-----")
    assert all("frequently asked" not in a for *_, a in qa)


def test_split_vsftpd_faq_edges() -> None:
    # no Q) line: the text as it is, nothing asked; a repeated question gets -2; a Q) or
    # A) not at a line's start is text; a question at the end with nothing under it asks
    # nothing
    page, none = ns.split_vsftpd_faq("Notes\n\nText with Q) inside.\n")
    assert none == [] and page == "Notes\n\nText with Q) inside.\n"
    page, qa = ns.split_vsftpd_faq(
        "Q) Same?\nA) First.\n\nQ) Same?\nA) Second, see A) above.\n Q) indented text.\n"
        "\nQ) Last?\n"
    )
    assert qa == [
        ("same", "Same?", "First."),
        ("same-2", "Same?", "Second, see A) above.\n Q) indented text."),
    ]
    assert page == "First.\n\nSecond, see A) above.\n Q) indented text.\n"


_WORD = st.sampled_from(["ftp", "chroot", "pam", "ssl", "port", "user", "upload", "anon"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=12),  # the question's words
            st.integers(min_value=0, max_value=2),  # where the question wraps (0: not)
            st.lists(  # the answer's labelled parts (may be none)
                st.lists(_WORD, min_size=1, max_size=8), min_size=0, max_size=3
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_vsftpd_faq_property(entries: list[tuple[list[str], int, list[list[str]]]]) -> None:
    """Random entries, some wrapped, some unanswered, answered in one to three labelled
    parts: one question per answered entry, in order, its slug its id, its answer the
    parts without their labels, in the page; no question's word left in it."""
    text, expected = "Title\n-----\n\n", []
    for n, (qwords, wrap, parts) in enumerate(entries):
        words = [f"entry{n}x", *qwords]
        cut = min(wrap, len(words) - 1) if wrap else 0
        head = " ".join(words[:cut]) + "\n" + " ".join(words[cut:]) if cut else " ".join(words)
        q = " ".join(words) + "?"
        text += f"Q) {head}?\n"
        labels = ["A)"] if len(parts) == 1 else [f"A{i})" for i in range(1, len(parts) + 1)]
        texts = [" ".join(["Answer", *p]) for p in parts]
        text += "".join(f"{label} {t}\n" for label, t in zip(labels, texts, strict=True)) + "\n"
        if parts:
            expected.append((ns._slug(q), q, "\n\n".join(texts)))
    page, qa = ns.split_vsftpd_faq(text)
    seen: dict[str, int] = {}
    expected = [(ns._repeat_id(seen, k), q, a) for k, q, a in expected]
    nsc.assert_random_split(page, qa, expected)


# -- the set, built from a package tree shaped like Debian's vsftpd -----------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.VSFTPD_PACKAGE, "3.0.3-13+b2")
    doc: Path = root / ns.VSFTPD_DOC
    write_gz(doc / ns.VSFTPD_FAQ, faq)
    (doc / "README").write_text("This is vsftpd, a secure and fast FTP server.\n")
    (doc / "TUNING").write_text("Tuning notes: run it standalone.\n")
    write_gz(doc / "SECURITY" / "DESIGN.gz", "Design notes: privilege separation.\n")
    ex = doc / ns.VSFTPD_EXAMPLES
    (ex / "VIRTUAL_USERS").mkdir(parents=True)
    (ex / "README").write_text("The example set-ups.\n")
    (ex / "VIRTUAL_USERS" / "README").write_text(
        f"A question people ask: {Q_HOME} This example sets up virtual users.\n"
    )
    (ex / "VIRTUAL_USERS" / "vsftpd.conf").write_text("guest_enable=YES\n")
    write_gz(
        root / "usr/share/man/man5/vsftpd.conf.5.gz",
        ".TH VSFTPD.CONF 5\n.SH NAME\nvsftpd.conf \\- config file for vsftpd\n.SH DESCRIPTION\n"
        "The file sets chroot_local_user and local_enable.\n",
    )
    write_gz(
        root / "usr/share/man/man8/vsftpd.8.gz",
        ".TH VSFTPD 8\n.SH NAME\nvsftpd \\- secure FTP daemon\n.SH DESCRIPTION\n"
        + "The daemon runs on.\n" * 9_000,
    )
    write_gz(doc / "NEWS.Debian.gz", "left out\n")
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_vsftpd_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.vsftpd_faq_set()
    nsc.assert_package_set(
        nset,
        "vsftpd-faq",
        ids=list(ANSWERS),
        files={
            "FAQ",
            "README",
            "TUNING",
            "SECURITY/DESIGN",
            "examples/README",
            "examples/VIRTUAL_USERS/README",
            "examples/VIRTUAL_USERS/vsftpd.conf",
            "man/vsftpd.conf.5.md",
        },
        source="FAQ",
        version="3.0.3-13+b2",
        too_long="man/vsftpd.8.md",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # a note quoting a question scrubbed, its other text kept; the man page as text
    assert "This example sets up virtual users." in nset.files["examples/VIRTUAL_USERS/README"]
    assert "chroot_local_user and local_enable" in nset.files["man/vsftpd.conf.5.md"]


def test_vsftpd_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "A) Yes. You are probably after the setting:\nchroot_local_user=YES", "A) Yes, it does."
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.vsftpd_faq_set(), Q_HOME, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.vsftpd_faq_set(), {"FAQ": FAQ}, ASKED)


def test_vsftpd_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ + "\nQ) Help! Does vsftpd support IPv6?\nA) Yes, read the man page about it.\n"
    nsc.assert_halves_survive_an_added_question(
        ns.vsftpd_faq_set, lambda: write_gz(doc / ns.VSFTPD_FAQ, more)
    )


def test_vsftpd_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.VSFTPD_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.vsftpd_faq_set, ns.VSFTPD_FAQ)
