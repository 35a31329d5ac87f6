"""`python -m parsolve ...` is the `parsolve` command (cli.py)."""
import sys

from .cli import main

sys.exit(main())
