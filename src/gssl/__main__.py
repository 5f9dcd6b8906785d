"""``python -m gssl``: the gssl command (:mod:`gssl.cli`)."""

import sys

from .cli import main

sys.exit(main())
