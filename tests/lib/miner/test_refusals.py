"""docs/reliability.md's table of every refusal is the code's: each row's function produces the row's status
(`WireError(..., status=)`, 400 when it names none; `BackendError`, 500; a `Response` with its status code; a
refused head's `(status, message)`), and every refusal in `lib/miner/` and in the access policy has its row.
Read from the source; the behaviour behind each row is tested beside its module (tests/lib/miner, tests/stress)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
ROW = re.compile(r"^\| (\d{3}) \| `([\w/.]+\.py)` `([\w.]+)` \| (.+) \|$")
MINER_SIDE = [*sorted((REPO / "lib" / "miner").rglob("*.py")), REPO / "lib" / "core" / "auth.py"]
NOT_THE_MINERS = {("lib/core/auth.py", "verify_response")}  # the validator's check of a miner's answer
RELAYS = {("lib/miner/app.py", "MinerApp.app", 500)}  # the handler answering a BackendError raised in a row's function


def table(text: str) -> list[tuple[int, str, str]]:
    section = text.split("### Every refusal", 1)[1].split("\n\n", 3)[2]
    return [(int(m[1]), m[2], m[3]) for line in section.splitlines() if (m := ROW.match(line))]


def refusals(function: ast.AST) -> set[int]:
    """The statuses a function's own code refuses with (an unresolved status, `error.status`, is not counted)."""
    found = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            given = {k.arg: k.value for k in node.keywords}
            status = given.get("status" if name == "WireError" else "status_code")
            if name == "WireError":
                found.add(status.value if isinstance(status, ast.Constant) else 400 if status is None else 0)
            elif name == "BackendError":
                found.add(500)
            elif name in ("Response", "JSONResponse") and isinstance(status, ast.Constant):
                found.add(status.value)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts:
            first = node.value.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, int) and first.value >= 400:
                found.add(first.value)
    return found - {0}


def functions(path: Path) -> dict[str, ast.AST]:
    """Every function of a module by its qualified name (`Class.method`)."""
    out: dict[str, ast.AST] = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[prefix + child.name] = child

    visit(ast.parse(path.read_text()), "")
    return out


def test_each_refusal_in_the_table_is_produced_where_it_says():
    rows = table((REPO / "docs" / "reliability.md").read_text())
    assert len(rows) >= 25
    wrong = [
        f"{status} {path} {name}"
        for status, path, name in rows
        if status not in refusals(functions(REPO / path).get(name, ast.Module(body=[], type_ignores=[])))
    ]
    assert wrong == []


def test_every_refusal_on_the_miners_side_has_its_row():
    listed = {(path, name, status) for status, path, name in table((REPO / "docs" / "reliability.md").read_text())}
    missing = [
        f"{status} {path} {name}"
        for file in MINER_SIDE
        for name, function in functions(file).items()
        if ((path := str(file.relative_to(REPO))), name) not in NOT_THE_MINERS
        for status in sorted(refusals(function))
        if (path, name, status) not in listed | RELAYS
    ]
    assert missing == []


def test_a_refusal_without_a_row_is_found(tmp_path):
    source = tmp_path / "app.py"
    source.write_text(
        "class App:\n    def handle(self):\n        raise WireError('no', status=418)\n"
        "    def other(self):\n        raise WireError('bad')\n"
    )
    assert {name: refusals(f) for name, f in functions(source).items()} == {"App.handle": {418}, "App.other": {400}}
