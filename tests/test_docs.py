"""The examples in the docs pages run as written (doctests: each page's `>>>` lines and their printed output)."""
import doctest
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).parent.parent / "docs"
# pages whose examples are doctests, with the fewest examples each must keep (a page that loses its examples fails)
PAGES = {"autograd.md": 10, "tour.md": 10, "tools.md": 2, "distributions.md": 5}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_doc_examples(page):
    text = (DOCS / page).read_text()
    text = re.sub(r"^```.*$", "", text, flags=re.M)  # a closing fence would read as expected output
    test = doctest.DocTestParser().get_doctest(text, {}, page, f"docs/{page}", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= PAGES[page]
