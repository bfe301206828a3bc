"""The structure of the package (docs/architecture.md, "The layers"): the import contracts in
pyproject.toml hold, no modules import each other in a circle, and no module is over 800 lines."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lucid

PACKAGE = Path(lucid.__file__).parent
PYPROJECT = PACKAGE.parent.parent / "pyproject.toml"
MAX_LINES = 800


def test_import_contracts_hold():
    """import-linter's contracts: the layers, no circle between sibling modules or packages, and the forbidden and
    independence rules. Imports inside functions count (docs/architecture.md: "not even inside a function")."""
    pytest.importorskip("importlinter")
    if not PYPROJECT.exists():
        pytest.skip("pyproject.toml is not beside this lucid (an installed copy)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")])}
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(PYPROJECT)!r}, no_cache=True, no_logo=True))")
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=PYPROJECT.parent, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def _module_cycles(graph) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            for k in range(i, len(edges[v])):
                w = edges[v][k]
                if w not in index:
                    work += [(v, k + 1), (w, 0)]
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
    return found


def test_no_module_imports_itself_through_others():
    """No circle of imports between modules, at any depth (lazy imports included): the circles issue 15 named
    (_tensor <-> _creation, autograd.engine -> _compile -> nn/optim, nn.functional <-> nn.modules.attention,
    ops.decomp <-> ops.reduce, ops.elementwise <-> ops.index) must not come back."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("lucid", cache_dir=None)
    assert _module_cycles(graph) == []


def test_module_cycle_finder_finds_a_circle():
    class Graph:  # a -> b -> c -> a, and d -> a outside the circle
        modules = {"a", "b", "c", "d"}
        imports = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, m):
            return self.imports[m]

    assert _module_cycles(Graph()) == [["a", "b", "c"]]


def test_no_module_over_800_lines():
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
