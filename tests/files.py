"""Small file readers for tests, and where the checkout is."""

import json
from pathlib import Path

REPO = str(Path(__file__).resolve().parent.parent)  # scripts run by path from the checkout


def read_text(path) -> str:
    with open(path) as handle:
        return handle.read()


def load_json(path):
    return json.loads(read_text(path))


def markdown_tables(markdown: str) -> list[list[dict]]:
    """Every Markdown table in `markdown` as a list of {header: cell} rows."""
    tables, current, headers = [], None, None
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if headers is None:
                headers, current = cells, []
            elif not set("".join(cells)) <= set("-: "):
                current.append(dict(zip(headers, cells)))
        elif headers is not None:
            tables.append(current)
            headers = current = None
    if headers is not None:
        tables.append(current)
    return tables
