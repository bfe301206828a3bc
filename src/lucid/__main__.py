"""``python -m lucid``: the same as the ``lucid`` command."""
import sys

from .cli import main

sys.exit(main())
