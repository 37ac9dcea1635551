"""Helper attacks69: attacks on helper perf61's disk paths (the read loop's kept folder
descriptors, :class:`treehop.ingest.loaders.FolderCursor`) and its write-lock changes
(``locks/`` made on demand, the per-store resolved path, the first waiter's pauses)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from treehop.ingest import loaders

_ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(_ROOT / "retrieval"), str(_ROOT / "integrations"), str(_ROOT / "tests")]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    return env


@pytest.mark.skipif(
    not loaders._BY_DIR_FD or not os.path.isdir("/proc/self/fd"), reason="needs dir_fd, /proc"
)
@pytest.mark.parametrize("free", [4, 8, 16])
def test_a_walk_near_the_descriptor_limit_reads_every_file_and_leaks_none(
    tmp_path: Path, free: int
) -> None:
    """A process with only ``free`` descriptors left (``RLIMIT_NOFILE``, in a child process)
    walks a tree 40 folders deep, a file at each level. Before, the cursor's kept folders
    took the last free descriptors and every deeper file was skipped as unreadable (16 free:
    23 of 40 files left out; the per-file descent it replaced read all 40). Every file is
    read, none is reported unreadable, no descriptor is left open."""
    code = textwrap.dedent(
        f"""
        import os, resource, sys
        from pathlib import Path
        from treehop.ingest import loaders
        top = Path(sys.argv[1])
        d = top
        for i in range(40):
            d = d / f"d{{i}}"
            d.mkdir(parents=True)
            (d / "f.md").write_text(f"# level {{i}}\\n\\ntext {{i}}\\n")
        loaders.walk(top)  # (imports done, caches warm: the count below is the walk's own)
        n = len(os.listdir("/proc/self/fd"))
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (n + {free}, hard))
        r = loaders.walk(top)
        print(len(r.files), len(r.skipped_unreadable), len(os.listdir("/proc/self/fd")) - n)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "deep")],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.split() == ["40", "0", "0"], out.stdout + out.stderr
