"""The `referee` command-line application and its library facade."""

__version__ = "0.1.0"
