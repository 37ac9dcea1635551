"""The Perl sets find their library under whatever arch and Perl version the Debian package
installs it (helper leftovers73a; stop 72's open item "``perl5/5.36`` in two sets' paths").

``embperl-faq`` named ``usr/lib/x86_64-linux-gnu/perl5/5.36`` outright, so the builder
failed ("no Embperl/Faq.pod under ...") on a package built for Perl 5.40 (Debian 13) or for
another arch; ``pdl-faq`` globbed the folder but took the last of several silently, and
perlfaq's note said "Perl 5.36" whatever the package held. The folder is now read from the
package's files (``natural_sets._packaged_folder``): the one folder matching the set's glob
that holds its FAQ; none is a ``FileNotFoundError``, several a ``ValueError`` naming them.
The set built is the same wherever the package puts the folder (its identity hash:
``check_natural_sets_identity.set_hashes``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_natural_sets_identity as ident
import natural_sets as ns
import test_natural_set_embperl_faq as embperl
import test_natural_set_pdl_faq as pdl
from debian_package_double import unpacked_package

NEWER = "usr/lib/aarch64-linux-gnu/perl5/5.40"


def _embperl_hashes(tmp: Path, where: str) -> tuple[dict[str, str], str]:
    with pytest.MonkeyPatch.context() as mp:
        embperl._package(tmp, mp, where)
        nset = ns.embperl_faq_set()
        return ident.set_hashes(nset), nset.note


def _pdl_hashes(tmp: Path, where: str) -> dict[str, str]:
    with pytest.MonkeyPatch.context() as mp:
        pdl._package(tmp, mp, where=where)
        return ident.set_hashes(ns.pdl_faq_set())


def test_embperl_faq_builds_the_same_set_under_a_newer_perl_and_another_arch(
    tmp_path: Path,
) -> None:
    before, note = _embperl_hashes(tmp_path / "a", embperl.DOC_DIR)
    after, newer_note = _embperl_hashes(tmp_path / "b", NEWER)
    assert after == before
    # the note names the folder the package holds, as it did for Debian 12's
    assert f"({embperl.DOC_DIR}/Embperl/Faq.pod, " in note
    assert f"({NEWER}/Embperl/Faq.pod, " in newer_note


def test_pdl_faq_builds_the_same_set_under_a_newer_perl(tmp_path: Path) -> None:
    """Control (passes on the base too: pdl-faq's glob already read the folder)."""
    before = _pdl_hashes(tmp_path / "a", pdl.POD_DIR)
    assert _pdl_hashes(tmp_path / "b", f"{NEWER}/PDL") == before


@pytest.mark.parametrize("which", ["embperl", "pdl"])
def test_a_package_holding_the_faq_in_two_perl_folders_is_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    """pdl-faq took the last folder by name (``5.40`` over ``5.36``, but ``5.9`` over
    ``5.10``) without a word; a set is built from one copy, so two are refused."""
    if which == "embperl":
        doc = embperl._package(tmp_path, monkeypatch)
        second = ns.ds.debian_package_root(ns.EMBPERL_PACKAGE) / NEWER
        build = ns.embperl_faq_set
    else:
        doc = pdl._package(tmp_path, monkeypatch)
        second = ns.ds.debian_package_root(ns.PDL_PACKAGE) / NEWER / "PDL"
        build = ns.pdl_faq_set
    shutil.copytree(doc, second, symlinks=True)
    with pytest.raises(ValueError, match="in 2 folders: ") as err:
        build()
    assert "x86_64-linux-gnu/perl5/5.36" in str(err.value), err.value
    assert "aarch64-linux-gnu/perl5/5.40" in str(err.value), err.value


def test_embperl_faq_without_the_faq_in_any_perl_folder_names_the_glob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control: a package without the FAQ still fails naming it (passes on the base)."""
    doc = embperl._package(tmp_path, monkeypatch)
    (doc / "Embperl/Faq.pod").unlink()
    with pytest.raises(FileNotFoundError, match=r"no Embperl/Faq\.pod under "):
        ns.embperl_faq_set()


def _perl_doc(tmp: Path, version_dir: str) -> str:
    with pytest.MonkeyPatch.context() as mp:
        root = unpacked_package(tmp, mp, ns.PERL_PACKAGE, "")
        pod = root / "usr/share/perl" / version_dir / "pod"
        pod.mkdir(parents=True)
        for name in ns.PERL_FAQS:
            (pod / f"{name}.pod").write_text(
                f"=head1 NAME\n\n{name} - part\n\n=head2 How do I frob {name} fast?\n\n"
                f"Use the frob function from the {name} page, it frobs in place.\n\n=cut\n",
                encoding="utf-8",
            )
        return ns.perlfaq_set().note


def test_perlfaqs_note_names_the_perl_the_package_holds(tmp_path: Path) -> None:
    assert _perl_doc(tmp_path / "a", "5.36.0").startswith("Perl 5.36 perlfaq1-9 (perl-doc, ")
    assert _perl_doc(tmp_path / "b", "5.40.1").startswith("Perl 5.40 perlfaq1-9 (perl-doc, ")


_REFERENCE: dict[str, dict[str, str]] = {}


@settings(max_examples=12, deadline=None)
@given(
    arch=st.from_regex(
        r"(x86_64|aarch64|i386|powerpc64le|s390x|riscv64)-linux-gnu", fullmatch=True
    ),
    perl=st.from_regex(r"5\.[0-9]{1,2}(\.[0-9])?", fullmatch=True),
)
def test_any_arch_and_perl_version_folder_builds_embperl_faq_alike(
    tmp_path_factory: pytest.TempPathFactory, arch: str, perl: str
) -> None:
    if not _REFERENCE:
        _REFERENCE.update(_embperl_hashes(tmp_path_factory.mktemp("ref"), embperl.DOC_DIR)[0])
    where = f"usr/lib/{arch}/perl5/{perl}"
    got, note = _embperl_hashes(tmp_path_factory.mktemp("perl"), where)
    assert got == _REFERENCE
    assert f"({where}/Embperl/Faq.pod, " in note
