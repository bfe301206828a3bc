"""``python -m bench``: the benchmark runner (``bench/run.py``)."""
from bench.run import main

main()
