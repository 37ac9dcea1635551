"""``python -m treehop``: the ``treehop`` command line (the same as ``python -m treehop.cli``).

Why: ``python -m treehop ...`` is the spelling a user tries first when the console script is
not on ``PATH`` (a virtual environment not activated); it used to fail with "'treehop' is a
package and cannot be directly executed"."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
