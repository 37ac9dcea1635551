"""A full disk and a read-only filesystem during writes, on a real small filesystem.

A 2 MB tmpfs is mounted for each test (the tests run as root, as CI does; ``mount`` failing
is a test failure, not a skip) and filled with a real file until ``write`` returns ENOSPC;
the read-only case remounts it ``ro``. A second mechanism that needs no root, a file-size
limit (``RLIMIT_FSIZE``: a real ``EFBIG`` from the kernel), runs in a subprocess. Each time:
the write is a typed ``StoreError``, the index stays at its last commit (in memory and on
disk), nothing half-written stays behind, and the next write after the disk recovers
succeeds.
"""

from __future__ import annotations

import gc
import json
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from treehop import EmbeddedStore, NotFoundError, StoreError, Treehop

from treehop_test_doubles import BagOfWordsEmbedder

R = "viking://resources"
REPO = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(str(REPO / d) for d in ("retrieval", "integrations", "tests")),
}


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "fs"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        pytest.fail(f"these tests mount a 2 MB tmpfs and need root: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        gc.collect()
        EmbeddedStore._registry.clear()
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt: Path) -> Path:
    """Fill the filesystem with a real file until the kernel says ENOSPC."""
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\xa5" * 4096)
    except OSError as exc:
        assert exc.errno == 28  # ENOSPC
    finally:
        os.close(fd)
    return filler


def _listing(path: Path) -> dict[str, int]:
    """Every file under ``path`` with its size."""
    return {
        str(p.relative_to(path)): p.stat().st_size
        for p in sorted(path.rglob("*"))
        if p.is_file() and p.name != "LOCK"
    }


def _big_text(seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(3000)}" for _ in range(10_000))


def _committed_sizes_match(idx: Path) -> None:
    m = json.loads((idx / (idx / "CURRENT").read_text().split()[0]).read_bytes())
    data = idx / f"data-{m['epoch']:06d}"
    for name, info in m["files"].items():
        assert (data / f"{name}.bin").stat().st_size == info["size"], name


@pytest.mark.parametrize("tagger", [None, "auto"])
def test_a_full_disk_fails_typed_keeps_the_last_commit_and_recovers(
    small_fs: Path, tagger: str | None
) -> None:
    idx = small_fs / "idx"
    th = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=tagger)  # type: ignore[arg-type]
    th.add_resource("zebra crossings are striped", target_uri=f"{R}/a", is_text=True)
    gen, before = th.store.generation, _listing(idx)
    filler = _fill(small_fs)
    for k in range(2):  # and again: a failed write leaves the store writable
        with pytest.raises(StoreError, match="No space left"):
            th.add_resource(_big_text(k), target_uri=f"{R}/big", is_text=True)
    assert th.store.generation == gen and not th.store.unsaved
    with pytest.raises(NotFoundError):
        th.read(f"{R}/big")
    assert th.read(f"{R}/a") == "zebra crossings are striped"
    assert _listing(idx) == before  # nothing half-written: no temporary, no appended tail
    _committed_sizes_match(idx)
    with pytest.raises(StoreError, match="No space left"):
        th.create_session()
    assert th.list_sessions() == []  # a session that was not saved is not kept either
    # what is on disk is whole: a fresh, fully verifying open reads the last commit
    fresh = EmbeddedStore(idx, verify=True)
    assert fresh.generation == gen and f"{R}/a" in fresh and f"{R}/big" not in fresh
    del fresh
    filler.unlink()  # space returns: the next write succeeds
    th.add_resource(_big_text(0), target_uri=f"{R}/big", is_text=True)
    assert th.store.generation == gen + 1
    assert th.find("w17 w42", limit=1).resources[0].uri.startswith(f"{R}/big")
    sid = th.create_session()
    assert [s.session_id for s in th.list_sessions()] == [sid]
    th.close()


def test_a_read_only_filesystem_fails_typed_and_reads_go_on(small_fs: Path) -> None:
    idx = small_fs / "idx"
    with Treehop(idx, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource("zebra crossings are striped", target_uri=f"{R}/a", is_text=True)
        gen = th.store.generation
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    before = _listing(idx)
    th = Treehop(idx, embedder=BagOfWordsEmbedder())
    with pytest.raises(StoreError, match="Read-only file system"):
        th.add_resource("another note", target_uri=f"{R}/b", is_text=True)
    with pytest.raises(StoreError, match="Read-only file system"):
        th.create_session()
    assert th.find("zebra", limit=1).resources[0].uri == f"{R}/a"
    assert th.store.generation == gen and _listing(idx) == before
    th.close()  # nothing unsaved: closing a read-only index is not an error
    subprocess.run(["mount", "-o", "remount,rw", str(small_fs)], check=True)
    with Treehop(idx, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource("another note", target_uri=f"{R}/b", is_text=True)
        assert th.store.generation == gen + 1 and th.read(f"{R}/b") == "another note"


FSIZE_CHILD = textwrap.dedent(
    """
    import json, resource, signal, sys
    from treehop import StoreError, Treehop
    from treehop_test_doubles import BagOfWordsEmbedder

    idx, big = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG, not a kill
    th = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None)
    gen = th.store.generation
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))  # no file may grow past 64 KiB
    out = {}
    try:
        th.add_resource(open(big).read(), target_uri="viking://resources/big", is_text=True)
        out["first"] = "written"
    except StoreError as exc:
        out["first"] = "StoreError: " + str(exc)
    except BaseException as exc:
        out["first"] = "untyped " + type(exc).__name__
    out["gen_after_failure"] = th.store.generation
    from pathlib import Path
    p = Path(idx)
    m = json.loads((p / (p / "CURRENT").read_text().split()[0]).read_bytes())
    data = p / f"data-{m['epoch']:06d}"
    files = m["files"].items()
    out["tails"] = {k: (data / f"{k}.bin").stat().st_size - v["size"] for k, v in files}
    out["temporaries"] = [str(f) for f in p.rglob("*") if ".tmp" in f.name]
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    th.add_resource(open(big).read(), target_uri="viking://resources/big", is_text=True)
    out["gen"], out["gen_before"] = th.store.generation, gen
    th.close()
    print(json.dumps(out))
    """
)


def test_a_file_size_limit_gives_a_real_efbig_that_is_typed_and_recovered(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("zebra crossings are striped", target_uri=f"{R}/a", is_text=True)
    gc.collect()
    EmbeddedStore._registry.clear()
    before = _listing(idx)
    big = tmp_path / "big.txt"
    big.write_text(_big_text(3))
    done = subprocess.run(
        [sys.executable, "-c", FSIZE_CHILD, str(idx), str(big)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["first"].startswith("StoreError") and "too large" in out["first"].lower()
    assert out["gen_after_failure"] == out["gen_before"] == 1 and out["gen"] == 2
    # after the failure (before the retry): no appended tail, no temporary file
    assert set(out["tails"].values()) == {0} and out["temporaries"] == []
    assert before  # the child's second write went through: the index reads it back
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        assert th.read(f"{R}/a") == "zebra crossings are striped"
        assert th.store.generation == 2 and th.find("w5 w9", limit=1).resources
    _committed_sizes_match(idx)
