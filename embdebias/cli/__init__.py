"""The ``embdebias`` command line: one module per subcommand (see :mod:`embdebias.cli.main`)."""

from .main import build_parser, main

__all__ = ["main", "build_parser"]
