"""`python -m pypto ...` is the `pypto` command (pypto/cli.py)."""

import sys

from pypto.cli import main

sys.exit(main())
