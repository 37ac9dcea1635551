"""The ``treehop`` console script (``python -m treehop.cli`` works too).

Commands: ``index``, ``find``, ``search``, ``session``, ``ls``, ``tree``, ``read``, ``rm``, ``tag``,
``retag``, ``eval`` and ``demo``; ``treehop COMMAND --help`` documents each, and
:class:`ExitCode` the exit statuses.
"""

from __future__ import annotations

from ._app import (
    ClientFactory,
    ClientOptions,
    ExitCode,
    build_parser,
    default_client_factory,
    main,
)

__all__ = [
    "ClientFactory",
    "ClientOptions",
    "ExitCode",
    "build_parser",
    "default_client_factory",
    "main",
]
