"""A local stand-in of the device call, to rehearse scripts/gpu_call.sh on a CPU before a GPU is lent:

    python scripts/gpu_rehearsal.py [--kit dist/gpu-kit-cp311/part1 [--kit-only]] [--keep DIR] [-- gpu-check flags]

What the device does, here: the working tree as a call sends it (tracked files and untracked ones git does not
ignore) copied into a scratch folder with the kit part carried as dist/gpu-kit/part1, `$OUT` an empty scratch
folder, install.sh's site a scratch folder, and `bash scripts/gpu_call.sh --cpu-rehearsal` run there with this
Python. Without --kit it builds a kit of the project's wheel alone for this Python (the GPU kit's build.py,
offline: no requirement is resolved). `--kit-only` hides from every process of the call each installed
distribution that neither the GPU machine's list (the kit's preinstalled.txt) nor the kit holds, as on the
GPU machine, so a step whose package the kit lacks is skipped here too (except the engines only a CPU path
loads: CTranslate2 for Whisper, which runs in transformers on CUDA). Then the files in `$OUT` are checked
against what a call returns (at most 8 files, 16 MiB each, 2 folders down, plain names).

Not rehearsed: CUDA (absent: every step takes its CPU path), the machine's own package versions (this
Python's are used), and Python 3.12 (a --kit must be built for this Python: build.py --python 3.11).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KIT_PART = "dist/gpu-kit/part1"  # where the call carries the kit (scripts/gpu_call.sh's default)
MAX_FILES, MAX_FILE_BYTES, MAX_DEPTH = 8, 16 * 2**20, 3  # $OUT/a/b/file comes back, $OUT/a/b/c/file does not
NAME = re.compile(r"^[A-Za-z0-9._-]+$")
# What only the CPU paths load, never hidden: Whisper runs in CTranslate2 on a CPU, in transformers on CUDA
CPU_ENGINES = {"faster-whisper"}
BLOCKER = """import sys
from importlib.machinery import PathFinder

HIDDEN = frozenset(%r)


class _NotOnTheGpuMachine(PathFinder):
    # absent as an uninstalled package is: importlib.util.find_spec gives None, an import ModuleNotFoundError
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        return None if name.split(".")[0] in HIDDEN else super().find_spec(name, path, target)


sys.meta_path[:] = [_NotOnTheGpuMachine if finder is PathFinder else finder for finder in sys.meta_path]
"""


def gpu_kit_dir() -> Path | None:
    """The workplace's GPU kit (build.py, install.sh, preinstalled.txt), beside the checkout."""
    for candidate in (REPO.parent / "shared" / "gpu-kit", REPO.parent.parent / "shared" / "gpu-kit"):
        if (candidate / "build.py").is_file():
            return candidate
    return None


def stage(work: Path) -> Path:
    """The tree a call sends: tracked files and untracked ones that git does not ignore."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "-co", "--exclude-standard"], capture_output=True, check=True
    ).stdout.decode()
    repo = work / "repo"
    for rel in filter(None, listed.split("\0")):
        source, target = REPO / rel, repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # a link travels as a link (pythonpath/audionet/lib -> ../../lib)
            os.symlink(os.readlink(source), target)
        elif source.is_file():
            shutil.copy2(source, target)
    return repo


def project_kit(repo: Path, kit_dir: Path) -> Path:
    """A kit of the project's own wheel for this Python, built offline by the kit's build.py."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    subprocess.run(
        [sys.executable, str(kit_dir / "build.py"), "--python", version, "--requirements", "", "--nodeps", ""]
        + ["--core", "", "--out", "dist/gpu-kit"],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    return repo / KIT_PART


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def top_level(dist: metadata.Distribution) -> set[str]:
    names = (dist.read_text("top_level.txt") or "").split()
    for file in dist.files or ():
        first = file.parts[0]
        if len(file.parts) > 1 and not first.endswith((".dist-info", ".data")) and first not in ("..", "__pycache__"):
            names.append(first)
        elif len(file.parts) == 1 and file.suffix in (".py", ".so"):
            names.append(file.name.split(".")[0])
    return set(names)


def hidden_modules(machine: set[str], kit: set[str]) -> set[str]:
    """Top-level modules of the installed distributions that are neither the `machine`'s (and what they
    need) nor the `kit`'s (build.py resolved the kit's needs into it)."""
    installed = {canon(d.metadata["Name"]): d for d in metadata.distributions()}
    keep, stack = {n for n in kit if n in installed}, [n for n in machine if n in installed]
    while stack:  # what the machine's packages bring with them (torch's CUDA wheels, ...)
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        for requirement in installed[name].requires or ():
            if "extra ==" not in requirement:
                dep = canon(re.split(r"[<>=!~\[;\s(]", requirement, maxsplit=1)[0])
                if dep in installed:
                    stack.append(dep)
    kept = set().union(*(top_level(installed[n]) for n in keep))
    return {m for n, d in installed.items() if n not in keep for m in top_level(d)} - kept


def machine_distributions(preinstalled: Path) -> set[str]:
    """The GPU machine's distributions (the kit's preinstalled.txt), canonical names."""
    listed = {canon(line.split("#")[0].split("==")[0].strip()) for line in preinstalled.read_text().splitlines()}
    return (listed | {"pip", "setuptools"}) - {""}


def kit_distributions(part: Path) -> set[str]:
    """The kit part's distributions (the project's among them), canonical names."""
    return {canon(w.name.split("-")[0]) for w in part.glob("*.whl")} | {"audionet"}


def returned(out: Path) -> list[str]:
    """What a device call would not return from `out` (empty: everything comes back)."""
    problems, files = [], [p for p in out.rglob("*") if p.is_file()]
    if len(files) > MAX_FILES:
        problems.append(f"{len(files)} files, more than {MAX_FILES}")
    for path in files:
        rel = path.relative_to(out)
        if len(rel.parts) > MAX_DEPTH:
            problems.append(f"{rel}: more than 2 folders down")
        if path.stat().st_size > MAX_FILE_BYTES:
            problems.append(f"{rel}: over 16 MiB")
        if not all(NAME.match(part) for part in rel.parts):
            problems.append(f"{rel}: a name outside letters, digits, '.', '_' and '-'")
    return problems


@dataclass
class Call:
    """A staged device call: the command to run in `repo` with `env`, and the `out` it fills."""

    repo: Path
    env: dict[str, str]
    out: Path
    command: list[str]


def prepare(work: Path, gpu_check_args: list[str], kit: Path | None = None, kit_only: bool = False, hide=()) -> Call:
    """The tree, the kit and the environment of a call in `work`; `hide`: more top-level modules to hide (as
    if the machine lacked them)."""
    kit_dir = gpu_kit_dir()
    if kit_dir is None:
        raise SystemExit("gpu_rehearsal: no ../shared/gpu-kit beside the checkout (the kit's build.py and install.sh)")
    repo = stage(work)
    if kit is not None:
        shutil.copytree(kit, repo / KIT_PART)
    part = repo / KIT_PART if kit is not None else project_kit(repo, kit_dir)
    out, site = work / "OUT", work / "site"
    env = {**os.environ, "OUT": str(out), "GPU_KIT_SITE": str(site), "GPU_KIT_PART": KIT_PART}
    env["GPU_PYTHON"] = sys.executable
    env.pop("PYTHONPATH", None)
    if kit_only:  # the list the kit was built against (make gpu-kit's, less transformers) rides in the part
        machine = machine_distributions(part / "preinstalled.txt") | CPU_ENGINES  # with what they need
        hide = {*hide, *hidden_modules(machine, kit_distributions(part))}
    hidden = set(hide)
    if hidden:
        blocker = work / "blocker"
        blocker.mkdir()
        (blocker / "sitecustomize.py").write_text(BLOCKER % (sorted(hidden),))
        # install.sh sets PYTHONPATH to its site, so the blocker rides in through the interpreter's wrapper
        wrapper = work / "python"
        path = f'"{blocker}${{PYTHONPATH:+:$PYTHONPATH}}"'
        wrapper.write_text(f'#!/bin/sh\nexport PYTHONPATH={path}\nexec "{sys.executable}" "$@"\n')
        wrapper.chmod(0o755)
        env["GPU_PYTHON"] = str(wrapper)
    return Call(repo, env, out, ["bash", "scripts/gpu_call.sh", "--cpu-rehearsal", *gpu_check_args])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kit", type=Path, help="a kit part built for this Python (default: the project's wheel)")
    parser.add_argument("--kit-only", action="store_true", help="hide what neither the GPU machine nor the kit has")
    parser.add_argument("--keep", type=Path, help="rehearse in this folder and keep it (default: a temporary one)")
    args, rest = parser.parse_known_args(argv)
    rest = rest[1:] if rest[:1] == ["--"] else rest
    work = args.keep or Path(tempfile.mkdtemp(prefix="gpu-rehearsal-"))
    work.mkdir(parents=True, exist_ok=True)
    call = prepare(work, rest, args.kit.resolve() if args.kit else None, args.kit_only)
    code = subprocess.run(call.command, cwd=call.repo, env=call.env, check=False).returncode
    files = sorted(str(p.relative_to(call.out)) for p in call.out.rglob("*") if p.is_file())
    print(f"gpu_rehearsal: exit {code}; $OUT ({call.out}): {', '.join(files) or 'empty'}")
    problems = returned(call.out)
    for problem in problems:
        print(f"gpu_rehearsal: a device call would not return {problem}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return code or (1 if problems else 0)


if __name__ == "__main__":
    sys.exit(main())
