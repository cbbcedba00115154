"""One module per `referee` subcommand, each exposing `register(subparsers)`."""
