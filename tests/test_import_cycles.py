"""No import cycle in src/sshbench (issue 51): every `import` and `from ... import` anywhere in a module counts,
inside functions and under `if TYPE_CHECKING:` too, and a package's `__init__` is a module of its own (a
submodule that imports `from sshbench.pkg import x` depends on it). import-linter's layers contract leaves
out imports for types only; this test does not."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _modules(src: Path = SRC) -> dict[str, Path]:
    found = {}
    for path in sorted((src / "sshbench").rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Each module -> the sshbench modules it imports: `from a.b import c` names a.b, and a.b.c when c is
    a module; a relative import is resolved against the module's package."""
    modules = _modules(src)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    anchor = parts[: len(parts) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None: a depth-first search that meets a module still on its path."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(name: str) -> list[str] | None:
        path.append(name)
        on_path.add(name)
        for target in sorted(graph[name]):
            if target in on_path:
                return [*path[path.index(target) :], target]
            if target not in done and (cycle := visit(target)):
                return cycle
        on_path.discard(path.pop())
        done.add(name)
        return None

    for name in sorted(graph):
        if name not in done and (cycle := visit(name)):
            return cycle
    return None


def test_no_import_cycle_in_sshbench() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A cycle made only of a function-local import, a type-only one and a relative one through a package's
    __init__ is still found (the test would otherwise pass for the wrong reason)."""
    pkg = tmp_path / "sshbench" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "sshbench" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sshbench import b\n")
    (tmp_path / "sshbench" / "b.py").write_text("def f():\n    from sshbench.pkg import c\n")
    (pkg / "c.py").write_text("x = 1\n")
    graph = import_graph(tmp_path)
    assert graph["sshbench.pkg"] == {"sshbench.pkg.a"}
    assert graph["sshbench.b"] == {"sshbench.pkg", "sshbench.pkg.c"}
    assert find_cycle(graph) == ["sshbench.b", "sshbench.pkg", "sshbench.pkg.a", "sshbench.b"]
    (tmp_path / "sshbench" / "b.py").write_text("def f():\n    from sshbench.pkg.c import x\n")
    assert find_cycle(import_graph(tmp_path)) is None
