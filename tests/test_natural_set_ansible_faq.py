"""The ``ansible-faq`` natural-question set (``bench/natural_sets.py``): Ansible's FAQ
(reStructuredText) read by ``cython-faq``'s rule, beside the documentation's other pages, on
a small inline sdist shaped as PyPI's ``ansible-2.9.27.tar.gz`` ships it
(``docs/docsite/rst/reference_appendices/faq.rst``: a target and a title under ``=``,
questions under ``+`` each behind its own target, a group "Common Platform Issues" with
text of its own over a question and "Running on X" topics under ``-``, a title with a "?"
inside it, a two-word answer, a closing "I don't see my question here"; beside it the
docs' other pages, another FAQ page whose questions are not the set's, a page quoting a
question, a page over the limit, the ``.txt`` snippets the pages include, and files outside
``docs/docsite/rst``); the archive put in the test's cache, so nothing is downloaded;
offline, no embedding model, no test reads the real sdist.

What the set's numbers rest on: the questions are exactly the titles Cython's rule picks
(not a list written for this page), each answer is exactly the text under its title, no
question is left in any file, the corpus is every ``.rst`` page under
``docs/docsite/rst`` and nothing else, an answer too short to judge leaves the set but not
the scrubbing, and ids are slugs, so an entry added keeps the halves.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns

Q_ENV = "How can I set the PATH or any other environment variable for a task or entire playbook?"
Q_PLATFORMS = "What customer platforms does Red Hat support?"
Q_CONFIG = "Where does the configuration file live and what can I configure in it?"
Q_VARS = "How do I see a list of all of the ansible_ variables?"
Q_GROUP = "How do I access a group variable?"
Q_FORMAT = "Why don't you ship in X format?"
MID = "When should I use {{ }}? Also, how to interpolate variables or dynamic variable names"


def title(text: str, char: str) -> str:
    """A reStructuredText section title underlined with ``char``."""
    return f"{text}\n{char * len(text)}\n"


FAQ = (
    ".. _ansible_faq:\n\n"
    + title("Frequently Asked Questions", "=")
    + "\nHere are some commonly asked questions and their answers.\n\n\n"
    ".. _set_environment:\n\n"
    + title(Q_ENV, "+")
    + "\nSetting environment variables can be done with the `environment` keyword. It can be "
    "used at the task or other levels in the play::\n\n    environment:\n"
    '      PATH: "{{ ansible_env.PATH }}:/thingy/bin"\n\n'
    + ".. _cpi:\n\n"
    + title("Common Platform Issues", "+")
    + "\nThese are some common platform issues.\n\n"
    + title(Q_PLATFORMS, "-")
    + "\nA number of them! For a definitive list please see this Knowledge Base article.\n\n"
    + title("Running on BSD", "-")
    + "\n.. seealso:: :ref:`working_with_bsd`\n\n"
    + ".. _config_file:\n\n"
    + title(Q_CONFIG, "+")
    + "\nSee :ref:`intro_configuration`.\n\n"
    + title("How do I see a list of all of the ansible\\_ variables?", "+")
    + "\nAnsible by default gathers facts about the machines under management, and these "
    "facts can be accessed in playbooks and in templates.\n\n"
    + title(Q_GROUP, "+")
    + "\nTechniques are the same as for any other variable: use ``hostvars`` with a host of "
    "the group.\n\n"
    + ".. _when_to_use_brackets:\n\n"
    + title(MID, "+")
    + "\nAnother rule is 'moustaches don't stack'.\n\n"
    + title(Q_FORMAT, "+")
    + "\nIn most cases packaging is left to the distributions and to pip.\n\n"
    + title("I don't see my question here", "+")
    + "\nPlease see the section below for a link to IRC and the Google Group.\n"
)
ASKED = [Q_ENV, Q_PLATFORMS, Q_CONFIG, Q_VARS, Q_GROUP, Q_FORMAT]
ANSWERS = {
    "how-can-i-set-the-path-or-any-other-envi": (
        "Setting environment variables can be done with the `environment` keyword. It can be "
        "used at the task or other levels in the play::\n\n    environment:\n"
        '      PATH: "{{ ansible_env.PATH }}:/thingy/bin"'
    ),
    "what-customer-platforms-does-red-hat-sup": (
        "A number of them! For a definitive list please see this Knowledge Base article."
    ),
    "where-does-the-configuration-file-live-a": "See :ref:`intro_configuration`.",
    "how-do-i-see-a-list-of-all-of-the-ansibl": (
        "Ansible by default gathers facts about the machines under management, and these "
        "facts can be accessed in playbooks and in templates."
    ),
    "how-do-i-access-a-group-variable": (
        "Techniques are the same as for any other variable: use ``hostvars`` with a host of "
        "the group."
    ),
    "why-don-t-you-ship-in-x-format": (
        "In most cases packaging is left to the distributions and to pip."
    ),
}
JUDGED = {k: a for k, a in ANSWERS.items() if k != "where-does-the-configuration-file-live-a"}


def test_the_faq_split_by_cythons_rule() -> None:
    text, qa = ns.split_cython_faq(FAQ)
    # the "+" titles ending with "?" ask; inside the group, its "-" question asks; the
    # backslash of "ansible\_" goes, as a reader types it
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the page title, the group with its text, the topic, the title whose "?" is inside
    # it (the rule reads the title's end) and the closing "I don't see my question here"
    # stay; every target goes
    assert text.startswith("# Frequently Asked Questions\n\nHere are some commonly asked")
    for kept in (
        "## Common Platform Issues\n\nThese are some common platform issues.",
        "### Running on BSD\n\n.. seealso:: :ref:`working_with_bsd`",
        f"## {MID}\n\nAnother rule is 'moustaches don't stack'.",
        "## I don't see my question here\n\nPlease see the section below",
    ):
        assert kept in text
    assert ".. _" not in text and "+++" not in text and "---" not in text


# -- the set, built from an sdist shaped like PyPI's ansible-2.9.27.tar.gz --------------------
# (the checks every sdist set shares run in test_natural_set_sdists.py on SDIST)

RST = "docs/docsite/rst"
WINDOWS_FAQ = (
    ".. _windows_faq:\n\n"
    + title("Windows Frequently Asked Questions", "=")
    + "\n"
    + title("Does Ansible work with Windows XP or Server 2003?", "`")
    + "\nAnsible does not work with Windows XP or Server 2003 hosts.\n"
)


def _reads(nset: ns.NaturalSet) -> None:
    # another FAQ page is a page like the others: its question stays, as a heading
    assert nset.files["user_guide/windows_faq.md"] == (
        "# Windows Frequently Asked Questions\n\n"
        "## Does Ansible work with Windows XP or Server 2003?\n\n"
        "Ansible does not work with Windows XP or Server 2003 hosts.\n"
    )
    # a page quoting a question: the question scrubbed, its other text kept; an
    # overlined title read
    glossary = nset.files["reference_appendices/glossary.md"]
    assert glossary.startswith("# Glossary\n\n## Facts\n")
    assert "Folks ask:" in glossary and "Read the FAQ." in glossary


SDIST = nsc.SdistSet(
    name="ansible-faq",
    build=ns.ansible_faq_set,
    project=ns.ANSIBLE_PROJECT,
    version=ns.ANSIBLE_VERSION,
    doc=ns.ANSIBLE_DOC,
    pages={ns.ANSIBLE_FAQ: FAQ},
    members={
        f"{RST}/index.rst": title("Ansible Documentation", "=")
        + "\n.. toctree::\n   :maxdepth: 2\n\n   reference_appendices/faq\n",
        f"{RST}/user_guide/windows_faq.rst": WINDOWS_FAQ,
        f"{RST}/reference_appendices/glossary.rst": "*******\nGlossary\n*******\n\n"
        + title("Facts", "=")
        + f"\nFolks ask: {Q_GROUP} Read the FAQ.\n",
        f"{RST}/user_guide/huge.rst": title("Huge", "=") + "\n" + "Notes. " * 25_000 + "\n",
        f"{RST}/shared_snippets/basic_concepts.txt": "leftout\n",
        f"{RST}/_themes/page.rst": "leftout\n",
        f"{RST}/conf.py": "leftout = 1\n",
        "docs/docsite/README.md": "leftout\n",
        "docs/docsite/keyword_desc.yml": "leftout: 1\n",
        "docs/man/ansible.rst": "leftout\n",
        "changelogs/CHANGELOG-v2.9.rst": "leftout\n",
        "README.rst": "leftout\n",
    },
    sources={k: "reference_appendices/faq.md" for k in JUDGED},
    answers=JUDGED,
    files={
        "reference_appendices/faq.md",
        "index.md",
        "user_guide/windows_faq.md",
        "reference_appendices/glossary.md",
    },
    too_long="user_guide/huge.rst",
    # the two-word answer is left out (and scrubbed)
    left_out=(Q_CONFIG,),
    note=("PyPI sdist ansible 2.9.27", "by cython-faq's rule"),
    asked=ASKED,
    shipped={"faq.txt": ns.rst_plain(FAQ)},
    short=(
        {
            ns.ANSIBLE_FAQ: FAQ.replace(
                "In most cases packaging is left to the distributions and to pip.", "Use pip."
            ).replace(
                "See :ref:`intro_configuration`.", "See the configuration page for every setting."
            )
        },
        Q_FORMAT,
    ),
    added={
        ns.ANSIBLE_FAQ: FAQ.replace(
            title(Q_FORMAT, "+"),
            title("How do I copy files recursively onto a target host?", "+")
            + "\nThe ``copy`` module has a recursive parameter for that.\n\n"
            + title(Q_FORMAT, "+"),
        )
    },
    refusals=[((ns.ANSIBLE_FAQ,), ns.ANSIBLE_FAQ)],
    reads=_reads,
)
