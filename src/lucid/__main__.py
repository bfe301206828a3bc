"""``python -m lucid``: the same as the ``lucid`` command."""
import sys

from .cli import main

if __name__ == "__main__":  # importing the module (the API reference inspects every module) runs nothing
    sys.exit(main())
