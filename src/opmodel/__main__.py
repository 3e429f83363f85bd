"""``python -m opmodel``: the same command line as the ``opmodel`` script."""

import sys

from opmodel.cli import main

sys.exit(main())
