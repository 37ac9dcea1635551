"""``python -m treehop.cli``: the same as the ``treehop`` console script."""

from __future__ import annotations

from . import main

raise SystemExit(main())
