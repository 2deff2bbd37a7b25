"""One module per ``python -m companion`` subcommand (see :mod:`companion.cli`)."""
