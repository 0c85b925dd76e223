"""The folders are the layers: every lib/ module sits in a folder that .importlinter's layers contract
names, so a new module is covered by where it is put; docs/development.md draws the same layers."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def contract_layers(text: str) -> list[list[str]]:
    """The layers contract's layers, top first, each a list of module names (`|` and `:` split siblings)."""
    config = configparser.ConfigParser()
    config.read_string(text)
    lines = [line.strip() for line in config["importlinter:contract:layers"]["layers"].splitlines() if line.strip()]
    return [[name.strip() for name in re.split(r"[|:]", line)] for line in lines]


def outside_layers(root: Path, layers: list[list[str]]) -> list[str]:
    """The modules under root/lib that no layer covers (a layer covers a package and everything in it)."""
    covered = [name for layer in layers for name in layer]
    found = []
    for path in sorted((root / "lib").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        module = ".".join(("audionet", *parts))
        if module != "audionet.lib" and not any(module == c or module.startswith(c + ".") for c in covered):
            found.append(module)
    return found


def test_every_lib_module_sits_in_a_layer_folder():
    layers = contract_layers((REPO / ".importlinter").read_text())
    assert outside_layers(REPO, layers) == []


def test_a_module_dropped_beside_the_layer_folders_is_found(tmp_path):
    (tmp_path / "lib" / "core").mkdir(parents=True)
    for name in ("lib/__init__.py", "lib/core/__init__.py", "lib/core/audio.py", "lib/helpers.py"):
        (tmp_path / name).write_text("")
    layers = [["audionet.lib.core"]]
    assert outside_layers(tmp_path, layers) == ["audionet.lib.helpers"]


def docs_layers(text: str) -> list[list[str]]:
    """The layer diagram in docs/development.md (the code block after '### Layers'), as module names."""
    block = text.split("### Layers", 1)[1].split("```", 2)[1]
    rows = [line.split("  ", 1)[0].strip() for line in block.splitlines()[1:] if line.strip()]
    as_module = {"neurons": "audionet.neurons", "benchmarks": "audionet.benchmarks", "models": "audionet.models"}

    def module(folder: str) -> str:
        return as_module.get(folder) or "audionet." + folder.removesuffix(".py").replace("/", ".")

    return [[module(folder.strip()) for folder in row.split("|")] for row in rows]


def test_the_docs_draw_the_layers_of_the_contract():
    contract = contract_layers((REPO / ".importlinter").read_text())
    assert docs_layers((REPO / "docs" / "development.md").read_text()) == contract
