"""References that cannot go stale: every file path (`lib/miner/app.py`, `tests/gated.py`,
`lib/validator/client.miner_health`) and every module name (`audionet.lib.core.stop`, `lib.core.timing.Timer`)
quoted in a docstring or in docs/ (and the README) resolves in the checkout, and so does every relative link
in the docs, with its #anchor where it has one (GitHub's heading ids). A module moved or renamed, or a heading
reworded, fails here until the prose that names it follows."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOP = ("lib", "models", "neurons", "benchmarks", "tests", "scripts", "docs", "deploy")
CODE = ("lib", "models", "neurons", "benchmarks", "tests", "scripts")
# `lib/miner/app.py`, `benchmarks/results/cpu-x86_64-2core/wire.{md,json}`, `lib/validator/client.miner_health`
PATH = re.compile(r"(?<![\w./+-])((?:" + "|".join(TOP) + r")/[\w./+*{},-]*[\w}*])")
# `audionet.lib.core.stop`, `lib.core.audio.Audio`, `tests.gated` (not a file name such as `benchmarks.md`)
MODULE = re.compile(r"(?<![\w./-])((?:audionet\.)?(?:lib|models|neurons|benchmarks|tests)(?:\.\w+)+)(?![\w/-])")
FILE_SUFFIXES = {"md", "json", "png", "html", "py", "txt", "sh", "jsonl", "toml", "ini", "yaml", "yml", "cfg"}
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ANCHORED = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")  # [text](page.md#anchor) and [text](#anchor)


def quoted_texts(root: Path):
    """(where, text) for each docs page, the README and every docstring in the code folders."""
    for page in [*sorted((root / "docs").rglob("*.md")), root / "README.md"]:
        if page.exists():
            yield page, page.read_text()
    for folder in CODE:
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node, clean=False)
                    if doc:
                        yield path, doc


def expand_braces(text: str) -> list[str]:
    """`wire.{md,json}` -> `wire.md`, `wire.json` (one brace group is all the docs use)."""
    match = re.search(r"\{([^{}]*)\}", text)
    if not match:
        return [text]
    return [text[: match.start()] + choice + text[match.end() :] for choice in match.group(1).split(",")]


def defines(source: Path, name: str) -> bool:
    """Whether a module file binds `name` at its top level (a def, a class, an assignment or an import)."""
    bound = set()
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return name in bound


def module_resolves(root: Path, parts: list[str]) -> bool:
    """The longest prefix of `parts` is a module or package and the next part, if any, a name it binds."""
    for end in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:end])
        source = base.with_suffix(".py") if base.with_suffix(".py").exists() else base / "__init__.py"
        if source.exists() or (base.is_dir() and end == len(parts)):
            if end == len(parts):
                return True
            return source.exists() and (defines(source, parts[end]) or root.joinpath(*parts[: end + 1]).exists())
    return False


def path_resolves(root: Path, quoted: str) -> bool:
    quoted = quoted.rstrip(".,")
    for path in expand_braces(quoted):
        if "*" in path:
            if not any(root.glob(path)):
                return False
        elif not (root / path).exists():
            # `lib/validator/client.miner_health`: a module file and a name in it
            stem, _, name = path.rpartition(".")
            if not (name.isidentifier() and (root / f"{stem}.py").exists() and defines(root / f"{stem}.py", name)):
                return False
    return True


@functools.cache
def heading_anchors(page: Path) -> frozenset[str]:
    """The ids GitHub gives `page`'s headings: lower case, punctuation dropped, spaces to hyphens, -1, -2 ... on
    repeats; none inside code fences."""
    anchors, repeats, fenced = [], {}, False
    for line in page.read_text().splitlines():
        fenced ^= line.startswith("```")
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        anchor = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        repeats[anchor] = repeats.get(anchor, -1) + 1
        anchors.append(f"{anchor}-{repeats[anchor]}" if repeats[anchor] else anchor)
    return frozenset(anchors)


def stale_references(root: Path) -> list[str]:
    stale = []
    for where, text in quoted_texts(root):
        label = where.relative_to(root)
        for match in PATH.finditer(text):
            if not path_resolves(root, match.group(1)):
                stale.append(f"{label}: {match.group(1)}")
        for match in MODULE.finditer(text):
            parts = match.group(1).split(".")
            if parts[-1] in FILE_SUFFIXES:
                continue
            if not module_resolves(root, parts[1:] if parts[0] == "audionet" else parts):
                stale.append(f"{label}: {match.group(1)}")
        if where.suffix == ".md":
            for match in LINK.finditer(text):
                link = match.group(1)
                if "://" not in link and not link.startswith("mailto:"):
                    if not (where.parent / link).exists():
                        stale.append(f"{label}: ({link})")
            for match in ANCHORED.finditer(text):
                page = where.parent / match.group(1) if match.group(1) else where
                if page.suffix == ".md" and page.exists() and match.group(2) not in heading_anchors(page.resolve()):
                    stale.append(f"{label}: ({match.group(1)}#{match.group(2)})")
    return stale


def test_every_quoted_path_and_module_resolves():
    assert stale_references(REPO) == []


def test_a_moved_module_is_found_where_it_is_quoted(tmp_path):
    (tmp_path / "lib" / "core").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "lib" / "core" / "stop.py").write_text('"""Stopping: see `lib.core.stop.check`."""\ndef check(): ...\n')
    (tmp_path / "lib" / "core" / "audio.py").write_text('"""Uses `lib.stop` and `lib/errors.py`."""\n')
    (tmp_path / "docs" / "a.md").write_text(
        "# Top\n`lib/core/stop.check` and `lib/core/stop.gone`, [b](b.md), [here](a.md#top), `audionet.lib.core.audio`\n"
        "## Top\n[again](#top-1), [gone](#bottom)\n"
    )
    assert stale_references(tmp_path) == [
        "docs/a.md: lib/core/stop.gone",
        "docs/a.md: (b.md)",
        "docs/a.md: (#bottom)",
        "lib/core/audio.py: lib/errors.py",
        "lib/core/audio.py: lib.stop",
    ]
