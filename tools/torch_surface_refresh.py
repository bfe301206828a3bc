"""Rewrite FLOOR and TODO in tests/test_torch_surface.py from the current measurement (needs torch installed).

Run after adding PyTorch names to lucid: ``PYTHONPATH=src python tools/torch_surface_refresh.py``. FLOOR becomes each
namespace's coverage rounded down to 0.1%, TODO the names still missing; it prints the numbers for the README."""
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST = ROOT / "tests" / "test_torch_surface.py"
sys.path.insert(0, str(TEST.parent))
import test_torch_surface as surface  # noqa: E402

floor, todo, present_all, total_all = {}, {}, 0, 0
for ns in surface.NAMESPACES:
    present, total, missing = surface.coverage(ns)
    present_all, total_all = present_all + present, total_all + total
    floor[ns] = int(1000 * present / total) / 10
    if missing:
        todo[ns] = missing
    print(f"torch.{ns or '<top>'}: {present}/{total} = {100 * present / total:.1f}%")
floor["overall"] = int(1000 * present_all / total_all) / 10
print(f"in scope overall: {present_all}/{total_all} = {100 * present_all / total_all:.1f}%")

floor_src = "FLOOR = {\n" + "".join(f"    {k!r}: {v},\n" for k, v in floor.items()) + "}"
todo_src = "TODO = {\n" + "".join(
    f'    {ns!r}: """\n{textwrap.fill(" ".join(names), 108, initial_indent=" " * 8, subsequent_indent=" " * 8)}\n'
    '    """.split(),\n' for ns, names in todo.items()) + "}"
text = TEST.read_text()
text = re.sub(r"FLOOR = \{.*?\n\}", lambda m: floor_src, text, count=1, flags=re.S)
text = re.sub(r"TODO = \{.*?\n\}", lambda m: todo_src, text, count=1, flags=re.S)
TEST.write_text(text)
