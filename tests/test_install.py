"""The installed distribution: one top-level package, typed, that a host program's own modules named
`search`, `vault` or `indexer` do not shadow."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = """
import sys
from memvault import Vault
import search, vault, indexer  # the host's own modules, beside this script
assert search.HOST and vault.HOST and indexer.HOST
with Vault(sys.argv[1]) as v:
    v.init("en")
    v.note("the host program wrote this")
    hits = v.search("host program", mode="substring")
print(hits[0].path, hits[0].text.strip().splitlines()[-1])
"""


def test_the_wheel_installs_one_typed_package_that_host_modules_do_not_shadow(tmp_path):
    src = tmp_path / "src"  # a copy: a build writes build/ and egg-info beside the sources
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "build", "tests",
                                                             "bench", "memory"))  # fmt: skip
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("memvault-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"memvault", wheel.name.split("-py")[0] + ".dist-info"}
    assert "memvault/py.typed" in names and "memvault/search/engine.py" in names
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                                str(wheel)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert sorted(p.name for p in site.iterdir() if not p.name.endswith(".dist-info")) == ["bin", "memvault"]

    host = tmp_path / "host"
    host.mkdir()
    (host / "main.py").write_text(HOST)
    for name in ("search", "vault", "indexer"):
        (host / f"{name}.py").write_text("HOST = True\n")
    # -S: no .pth files, so not this checkout's editable install; the dependencies from this environment
    deps = sysconfig.get_paths()["purelib"]
    env = {"PYTHONPATH": f"{site}:{deps}", "PATH": "/usr/bin:/bin", "MEMVAULT_USER_VAULT": str(tmp_path / "user")}
    run = subprocess.run([sys.executable, "-S", str(host / "main.py"), str(tmp_path / "vault")], cwd=host, env=env,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("daily/") and "the host program wrote this" in run.stdout
