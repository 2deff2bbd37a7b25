"""``python -m companion``: see :mod:`companion.cli`."""

from companion.cli import main

raise SystemExit(main())
