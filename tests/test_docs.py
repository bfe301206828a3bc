"""The examples in docs/autograd.md run as written."""
import doctest
import re
from pathlib import Path


def test_autograd_doc_examples():
    text = (Path(__file__).parent.parent / "docs" / "autograd.md").read_text()
    text = re.sub(r"^```.*$", "", text, flags=re.M)  # a closing fence would read as expected output
    test = doctest.DocTestParser().get_doctest(text, {}, "autograd.md", "docs/autograd.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 10
