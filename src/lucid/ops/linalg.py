"""Matrix products: matmul (1-D, 2-D, batched, broadcasting) and its spellings mm, bmm, dot, outer."""
from __future__ import annotations

__all__: list = []
