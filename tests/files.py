"""Small file readers for tests, and where the checkout is."""

import json
from pathlib import Path

REPO = str(Path(__file__).resolve().parent.parent)  # scripts run by path from the checkout


def read_text(path) -> str:
    with open(path) as handle:
        return handle.read()


def load_json(path):
    return json.loads(read_text(path))
