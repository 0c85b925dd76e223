"""scripts/import_circles.py: no import circle between the package's modules, imports inside functions and under
TYPE_CHECKING included (`make lint` runs it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("import_circles", REPO / "scripts" / "import_circles.py")
import_circles = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_circles)


def test_the_package_has_no_import_circle():
    assert import_circles.circles(import_circles.graph(REPO)) == []


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    miner = tmp_path / "lib" / "miner"
    miner.mkdir(parents=True)
    (tmp_path / "lib" / "__init__.py").write_text("")
    (miner / "__init__.py").write_text("from audionet.lib.miner.app import App\n")
    (miner / "app.py").write_text("from audionet.lib.miner import health\nclass App: ...\n")
    (miner / "health.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from audionet.lib.miner.app import App\n"
    )
    (miner / "pool.py").write_text("def build():\n    from .ray import actors\n")
    (miner / "ray.py").write_text("from audionet.lib.miner.pool import build\ndef actors(): ...\n")
    (miner / "alone.py").write_text("import audionet.lib.miner.app\n")
    assert import_circles.circles(import_circles.graph(tmp_path)) == [
        ["audionet.lib.miner.app", "audionet.lib.miner.health"],
        ["audionet.lib.miner.pool", "audionet.lib.miner.ray"],
    ]
