"""The deployment files (pm2, systemd, Docker) start commands the neurons accept: every flag they pass is
parsed by the miner's or validator's own parser, and the Docker build copies what exists and keeps the
torch pin. (No Docker, pm2 or systemd here: the files themselves are checked, not run.)"""

import fnmatch
import json
import os
import re
import shlex

import pytest

from audionet.neurons import miner, validator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARSERS = {"audionet-miner": miner.build_parser, "audionet-validator": validator.build_parser}


def read(*parts: str) -> str:
    with open(os.path.join(ROOT, *parts)) as handle:
        return handle.read()


def test_pm2_apps_pass_flags_the_neurons_accept():
    text = read("deploy", "pm2", "ecosystem.config.js")
    apps = re.findall(r'script: "\.venv/bin/([\w-]+)",\s*interpreter: "none",\s*args: (\[.*?\]),', text, re.S)
    assert [name for name, _ in apps] == ["audionet-miner", "audionet-validator"]
    for name, args in apps:
        parsed = PARSERS[name]().parse_args(json.loads(args))
        assert parsed.netuid == 16
    assert PARSERS["audionet-miner"]().parse_args(json.loads(apps[0][1])).pool_devices == "auto"


def test_systemd_unit_starts_a_miner_with_accepted_flags():
    (line,) = [
        line
        for line in read("deploy", "systemd", "audionet-miner.service").splitlines()
        if line.startswith("ExecStart=")
    ]
    command = shlex.split(line.removeprefix("ExecStart="))
    assert command[0].endswith("/.venv/bin/audionet-miner")
    args = miner.build_parser().parse_args(command[1:])
    assert args.pool_devices == "cuda:0,cuda:1" and args.pool_parallel == (2, 1)


def dockerignore() -> list[str]:
    return [line.strip() for line in read(".dockerignore").splitlines() if line.strip() and not line.startswith("#")]


def ignored(path: str) -> bool:
    return any(
        fnmatch.fnmatch(path, pattern) or path.startswith(pattern.rstrip("/") + "/") for pattern in dockerignore()
    )


def test_dockerfile_copies_what_exists_and_holds_torch_in_every_pip_call():
    text = read("Dockerfile")
    sources = [part for line in text.splitlines() if line.startswith("COPY ") for part in line.split()[1:-1]]
    assert sources and all(os.path.exists(os.path.join(ROOT, s)) and not ignored(s) for s in sources), sources
    installs = re.findall(r"pip install.*", text)
    assert len(installs) == 6 and all(line.startswith("pip install -c constraints.txt ") for line in installs), installs
    assert "onnxruntime-gpu" in text and ignored(".venv") and ignored("benchmarks/results")


@pytest.mark.parametrize(
    "name", ["Dockerfile", "deploy/pm2/ecosystem.config.js", "deploy/systemd/audionet-miner.service"]
)
def test_the_gpu_hosts_page_refers_to_each_file(name):
    assert name in read("docs", "gpu-hosts.md")
