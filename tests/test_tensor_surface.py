"""The Tensor's public surface: ``sorted(dir(Tensor))`` (the names not starting with ``_``) against the snapshot in
tests/data/tensor_surface.txt, and the rule that keeps it in one place: only ``lucid._surface.attach`` adds to
Tensor (an op declares its methods with ``defop``/``declare``'s ``method=`` and ``inplace=``).

A name added or removed on purpose: refresh the snapshot (one command, from the repository root) and commit it:

    PYTHONPATH=src python tests/test_tensor_surface.py
"""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "data" / "tensor_surface.txt"


def _public_names() -> list:
    import lucid
    return sorted(n for n in dir(lucid.Tensor) if not n.startswith("_"))


def test_the_tensor_surface_matches_its_snapshot():
    expected = SNAPSHOT.read_text().split()
    got = _public_names()
    added, removed = sorted(set(got) - set(expected)), sorted(set(expected) - set(got))
    assert not added and not removed, (
        f"Tensor gained {added} and lost {removed}; if on purpose, refresh the snapshot: "
        "PYTHONPATH=src python tests/test_tensor_surface.py")


def _assignments_to_tensor(tree) -> list:
    """Lines that set a Tensor attribute: ``Tensor.x = ...`` or ``setattr(Tensor, ...)``."""
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "Tensor":
                    found.append(node.lineno)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "Tensor"):
            found.append(node.lineno)
    return found


def test_only_the_surface_module_attaches_to_tensor():
    src = ROOT / "src" / "lucid"
    offenders = []
    for path in sorted(src.rglob("*.py")):
        if path.name == "_surface.py" and path.parent == src:
            continue
        lines = _assignments_to_tensor(ast.parse(path.read_text()))
        offenders += [f"{path.relative_to(ROOT)}:{n}" for n in lines]
    assert not offenders, ("set Tensor attributes with lucid._surface.attach (or an op's method=/inplace=), not "
                           f"directly: {offenders}")


def test_the_registry_lists_what_tensor_has():
    """``_surface.attached`` is what was attached, last attachment winning, and nothing replaced it since."""
    import lucid
    from lucid import _surface
    assert len(_surface.attached) > 400
    for name, value in _surface.attached.items():
        assert vars(lucid.Tensor)[name] is value, name


if __name__ == "__main__":  # refresh the snapshot
    SNAPSHOT.write_text("\n".join(_public_names()) + "\n")
    print(f"wrote {len(_public_names())} names to {SNAPSHOT.relative_to(ROOT)}", file=sys.stderr)
