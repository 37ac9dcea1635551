"""The ``nut-faq`` natural-question set (``bench/natural_sets.py``), its reading of an
AsciiDoc source FAQ and the question-leak check (``bench/check_question_leaks.py``) on a
small inline FAQ shaped like Debian's ``nut`` ships it (``/usr/share/doc/nut/FAQ.txt.gz``:
the title inside ``ifndef::``/``endif::`` over a ``====`` underline, then column-0 ``==``
entries, most asked ("Why doesn't upsmon shut down my system?  I pulled the plug and nothing
happened."), some as statements of four words or more ("I just upgraded, and ..."), one
variant whose answer is only "Or a variation like...", an entry with no text at all,
``*Answer 1*`` parts, ``------`` listing blocks holding a shell comment and a ``==`` line)
in package trees laid out as ``nut``, ``nut-client`` and ``nut-server`` unpack (the notes,
the man pages, the release notes and single-driver pages to be left out; markers present,
nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's own
lines, a README or a man page quoting one); each answer is exactly the text under its
``==`` line up to the next one; a ``==`` line inside a listing block is text; a short title
asks nothing and stays; ids are the questions' slugs, so an added entry keeps the halves;
an answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_UPGRADED = "I just upgraded, and ..."
Q_BROKEN = "My UPS driver now says it's 'broken', and won't start.  What now?"
Q_GONE = "My favorite UPS driver disappeared after an upgrade.  What now?"
Q_ROOT = "My UPS driver program won't work.  I'm starting it as root, so what's the problem?"
Q_LISTEN = "I get a 'not listening on...' error from upsd."
Q_SHUTDOWN = "Why doesn't upsmon shut down my system?  I pulled the plug and nothing happened."
Q_EMPTY = "Is this entry answered at all?"
Q_RACE = "The power came back during the shutdown.  How can I fix that?"
ASKED = (Q_UPGRADED, Q_BROKEN, Q_GONE, Q_ROOT, Q_LISTEN, Q_SHUTDOWN, Q_RACE)
"""Every entry with text under it, in order (``Q_EMPTY`` has none: it asks nothing)."""

FAQ = f"""ifndef::external_title[]
NUT Frequently Asked Questions
==============================
endif::external_title[]

== {Q_UPGRADED}
You have read link:UPGRADING[UPGRADING] in the base directory of the
distribution, right?

== {Q_BROKEN}
Or a variation like...

== {Q_GONE}

Drivers are occasionally removed from the tree if they are no longer
receiving maintenance.

== {Q_ROOT}

*Answer 1*

The drivers drop root privileges long before the serial port is
opened.

*Answer 2*

You can also specify a user with "user=" in the global part of
ups.conf:

\tuser = nut

== {Q_LISTEN}

upsd is not listening on the address you asked for.

== Mailing lists

Write to the nut-upsuser list.

== {Q_SHUTDOWN}

Pulling the plug does not cut the serial line. Use this instead:

------
# the upsmon forced shutdown, as root
== not a heading inside a listing block
upsmon -c fsd
------

That sets the FSD flag.

== {Q_EMPTY}
== {Q_RACE}

Implement this by modifying your shutdown script like this:

------
\tif (test -f /etc/killpower)
\tthen
\t\t/sbin/upsdrvctl shutdown
\tfi
------
"""
ANSWERS = {
    "i-just-upgraded-and": (
        "You have read link:UPGRADING[UPGRADING] in the base directory of the\ndistribution, right?"
    ),
    "my-ups-driver-now-says-it-s-broken-and-w": "Or a variation like...",
    "my-favorite-ups-driver-disappeared-after": (
        "Drivers are occasionally removed from the tree if they are no longer\n"
        "receiving maintenance."
    ),
    "my-ups-driver-program-won-t-work-i-m-sta": (
        "*Answer 1*\n\nThe drivers drop root privileges long before the serial port is\n"
        'opened.\n\n*Answer 2*\n\nYou can also specify a user with "user=" in the global '
        "part of\nups.conf:\n\n\tuser = nut"
    ),
    "i-get-a-not-listening-on-error-from-upsd": (
        "upsd is not listening on the address you asked for."
    ),
    "why-doesn-t-upsmon-shut-down-my-system-i": (
        "Pulling the plug does not cut the serial line. Use this instead:\n\n------\n"
        "# the upsmon forced shutdown, as root\n== not a heading inside a listing block\n"
        "upsmon -c fsd\n------\n\nThat sets the FSD flag."
    ),
    "the-power-came-back-during-the-shutdown": (
        "Implement this by modifying your shutdown script like this:\n\n------\n"
        "\tif (test -f /etc/killpower)\n\tthen\n\t\t/sbin/upsdrvctl shutdown\n\tfi\n------"
    ),
}
JUDGED = [k for k in ANSWERS if k != "my-ups-driver-now-says-it-s-broken-and-w"]


def test_split_nut_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_nut_faq(FAQ)
    nsc.assert_split_answers(page, qa, [" ".join(q.split()) for q in ASKED], ANSWERS)
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page
    # a short title asks nothing: it stays as a line of the page, its text in no answer
    assert "\n== Mailing lists\n\nWrite to the nut-upsuser list.\n" in page
    assert all("Mailing lists" not in a and "nut-upsuser" not in a for *_, a in qa)
    # the title block stays in the page, in no answer
    assert page.startswith("ifndef::external_title[]\nNUT Frequently Asked Questions\n====")
    assert all("Frequently Asked" not in a for *_, a in qa)


def test_split_nut_faq_blocks_repeats_and_no_questions() -> None:
    # a == line inside a listing block is text, after the block a heading again
    _, qa = ns.split_nut_faq(
        "== Why is this asked?\n\n----\n== What about this one?\n----\n\n"
        "== And this one after the block?\n\nText.\n"
    )
    assert qa == [
        ("why-is-this-asked", "Why is this asked?", "----\n== What about this one?\n----"),
        ("and-this-one-after-the-block", "And this one after the block?", "Text."),
    ]
    # a literal block (....) shields its == lines too; a === line is no entry
    _, lit = ns.split_nut_faq("== Asked here?\n\n....\n== Not asked?\n....\n=== Part\nMore.\n")
    assert lit == [("asked-here", "Asked here?", "....\n== Not asked?\n....\n=== Part\nMore.")]
    # an indented == line is text
    _, indented = ns.split_nut_faq("== Asked?\n\n  == Not asked?\nText.\n")
    assert indented == [("asked", "Asked?", "== Not asked?\nText.")]
    # questions whose slugs agree in their first 40 characters: -2
    q1 = "My Mac won't power back up by itself into Linux?"
    q2 = "My Mac won't power back up by itself into Mac OS X?"
    _, again = ns.split_nut_faq(f"== {q1}\n\nA.\n\n== {q2}\n\nB.\n")
    assert again == [
        ("my-mac-won-t-power-back-up-by-itself-int", q1, "A."),
        ("my-mac-won-t-power-back-up-by-itself-int-2", q2, "B."),
    ]
    page, none = ns.split_nut_faq("NUT FAQ\n=======\n\nSome prose, no entry.\n")
    assert none == [] and page == "NUT FAQ\n=======\n\nSome prose, no entry.\n"


_WORD = st.sampled_from(["ups", "upsd", "upsmon", "driver", "usb", "serial", "battery", "nut"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # ends with "?"
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
            st.booleans(),  # a listing block with a == line in the answer
        ),
        max_size=8,
    )
)
def test_split_nut_faq_property(entries: list[tuple[list[str], bool, list[str], bool]]) -> None:
    """Random entries, asked or short titles, some unanswered, some with a listing block
    holding a ``==`` line: one question per answered asked entry, in order, each answer
    its text, in the page, no asked title left in it, every short title kept."""
    lines = ["NUT Frequently Asked Questions", "==============================", ""]
    expected: list[tuple[str, str, str]] = []
    kept: list[str] = []
    for k, (words, asks, awords, block) in enumerate(entries):
        title = " ".join([f"entry{k}x", *words]) + ("?" if asks else "")
        lines += [f"== {title}", ""]
        body: list[str] = []
        if awords:
            body.append(" ".join(["Answer", *awords]))
        if block:
            body += ["", "------", f"== inside{k}x block line?", "------"]
        answer = "\n".join(body).strip("\n")
        lines += [*body, ""]
        if not ns.emacs_faq_asks(title):
            kept.append(f"== {title}")
        elif answer:
            expected.append((f"entry{k}x-" + "-".join(words), title, answer))
    page, qa = ns.split_nut_faq("\n".join(lines))
    assert [(q, a) for _, q, a in qa] == [(q, a) for _, q, a in expected]
    assert [k for k, _, _ in qa] == [ns._slug(k).strip("-") for k, _, _ in expected]
    for _, q, a in qa:
        assert a in page
        assert f"== {q}" not in page
    for line in kept:
        assert f"\n{line}\n" in page + "\n"


# -- the set, built from package trees shaped like Debian's nut, nut-client, nut-server ----

UPSMON_8 = f""".TH "UPSMON" "8"
.SH "NAME"
upsmon \\- UPS monitor and shutdown controller
.SH "DESCRIPTION"
.sp
{Q_SHUTDOWN} Run upsmon \\-c fsd to test the shutdown.
"""


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.NUT_PACKAGE, "2.8.0-7")
    doc: Path = root / ns.NUT_DOC
    write_gz(doc / ns.NUT_FAQ, faq)
    write_gz(doc / "README.gz", f"Network UPS Tools Overview\n\n{Q_GONE} See the FAQ.\n")
    write_gz(doc / "README.Debian.gz", "nut for Debian\n\nEdit /etc/nut/nut.conf first.\n")
    write_gz(doc / "config-notes.txt.gz", "Configuration notes\n===================\n\nups.conf\n")
    (doc / "outlets.txt").write_text("Outlets\n=======\n\nSwitchable outlets.\n")
    for skipped in ("NEWS.gz", "changelog.gz", "TODO.gz", "AUTHORS.gz", "acknowledgements.txt.gz"):
        write_gz(doc / skipped, "left out\n")
    (doc / "MAINTAINERS").write_text("left out\n")
    client = unpacked_package(tmp_path, monkeypatch, "nut-client", "2.8.0-7")
    write_gz(client / "usr/share/man/man8/upsmon.8.gz", UPSMON_8)
    write_gz(
        client / "usr/share/man/man5/upsmon.conf.5.gz",
        '.TH "UPSMON.CONF" "5"\n.SH "NAME"\nupsmon.conf \\- upsmon configuration\n',
    )
    server = unpacked_package(tmp_path, monkeypatch, "nut-server", "2.8.0-7")
    write_gz(
        server / "usr/share/man/man8/upsd.8.gz",
        '.TH "UPSD" "8"\n.SH "NAME"\nupsd \\- UPS information server\n',
    )
    write_gz(
        server / "usr/share/man/man8/usbhid-ups.8.gz",
        '.TH "USBHID-UPS" "8"\n.SH "NAME"\nusbhid-ups \\- left out\n',
    )
    return doc


def test_nut_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.nut_faq_set()
    assert [q.qid for q in nset.questions] == [f"nut-faq:{k}" for k in JUDGED]
    assert nset.left_out == (" ".join(Q_BROKEN.split()),)  # "Or a variation like..."
    assert set(nset.files) == {
        "FAQ.txt",
        "README",
        "README.Debian",
        "config-notes.txt",
        "outlets.txt",
        "man/upsmon.8.md",
        "man/upsmon.conf.5.md",
        "man/upsd.8.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    # the README and a man page quoting a question: scrubbed, their other text kept
    assert "See the FAQ." in nset.files["README"]
    assert "to test the shutdown." in nset.files["man/upsmon.8.md"]
    assert "Write to the nut-upsuser list." in nset.files["FAQ.txt"]
    nsc.assert_files_as_written(nset)
    assert "2.8.0-7" in nset.note
    assert (
        "README, README.Debian, config-notes.txt, outlets.txt, upsmon.conf.5, upsmon.8, upsd.8"
        in nset.note
    )
    nsc.assert_held_out("nut-faq")


def test_nut_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ.replace("upsd is not listening on the address you asked for.", "See upsd.conf.")
    _package(tmp_path, monkeypatch, faq)
    nset = ns.nut_faq_set()
    assert nset.left_out == (" ".join(Q_BROKEN.split()), Q_LISTEN)
    assert Q_LISTEN in nset.note
    assert len(nset.questions) == len(JUDGED) - 1
    # scrubbed all the same
    assert nsc.flat(Q_LISTEN) not in nsc.flat(" ".join(nset.files.values()))


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ as
    shipped (it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.nut_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(" ".join(q.split()) for q in ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"FAQ.txt": FAQ}, asked, False)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(asked)


def test_nut_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.nut_faq_set)
    more = FAQ.replace(
        "== Mailing lists\n",
        "== How do you make upsd reload the config file?\n\n"
        "Send upsd a SIGHUP, or start it again with upsd -c reload.\n\n== Mailing lists\n",
    )
    write_gz(doc / ns.NUT_FAQ, more)
    nsc.assert_halves_kept(ns.nut_faq_set, first, dev, test)


def test_nut_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.NUT_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no FAQ.txt.gz under")):
        ns.nut_faq_set()
