"""The referee: the library API (`referee.session`) and the `referee` command line over it (`referee.cli`)."""

__version__ = "0.1.0"  # the package's version: pyproject.toml reads it from here
