"""Small file readers for tests."""
import json


def read_text(path) -> str:
    with open(path) as handle:
        return handle.read()


def load_json(path):
    return json.loads(read_text(path))
