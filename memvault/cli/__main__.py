"""`python -m memvault.cli`: the daemon starts itself this way (the console script may not be on PATH)."""

import sys

from memvault.cli import main

sys.exit(main())
