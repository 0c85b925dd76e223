"""Entry points fail with one clear line, never a traceback."""

import subprocess
import sys

from audionet.lib.core.chain import OfflineChain
from tests.files import REPO


def run(*args, timeout=120):
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def test_scripts_run_by_path_from_a_checkout():
    for script in ("neurons/miner.py", "neurons/validator.py", "neurons/localnet.py"):
        result = run(script, "--help")
        assert result.returncode == 0 and "usage:" in result.stdout, result.stderr


def test_bad_setup_is_one_line_not_a_traceback(tmp_path, wallets):
    chain = str(tmp_path / "chain.sqlite")
    OfflineChain(chain)
    wallets("m")
    common = [
        "--netuid",
        "1",
        "--subtensor.network",
        f"offline:{chain}",
        "--wallet.name",
        "m",
        "--wallet.path",
        str(tmp_path / "wallets"),
        "--axon.port",
        "1",
    ]
    cases = [
        (["neurons/miner.py", *common, "--tts.model", "baseline:nope"], "no baseline named 'nope'"),
        (
            ["neurons/miner.py", *common, "--music.model", "hf:facebook/musicgen-small"],
            "model facebook/musicgen-small not found locally and the hub is offline",
        ),
        (["neurons/miner.py", *common, "--music.model", "musicgen:small"], "unknown model spec"),
        (["neurons/miner.py", *common, "--axon.ip", "127.0.0.1"], "could not publish the endpoint"),  # unregistered
        (
            [
                "neurons/validator.py",
                "--netuid",
                "1",
                "--subtensor.network",
                f"offline:{chain}",
                "--wallet.name",
                "ghost",
                "--wallet.path",
                str(tmp_path / "wallets"),
            ],
            "cannot load hotkey",
        ),
        (
            [
                "neurons/validator.py",
                "--netuid",
                "1",
                "--subtensor.network",
                f"offline:{tmp_path / 'none.sqlite'}",
                "--wallet.name",
                "m",
                "--wallet.path",
                str(tmp_path / "wallets"),
            ],
            "does not exist",
        ),
        (
            [
                "neurons/validator.py",
                *common[:6],
                "--wallet.path",
                str(tmp_path / "wallets"),
                "--vc.references",
                str(tmp_path),
            ],
            "no .wav/.flac/.ogg clips found",
        ),
        # a default subnet runs at most two mechanisms: localnet says so before it starts anything
        (["neurons/localnet.py", "--mechanisms", "3", "--workdir", str(tmp_path / "net")], "MaxMechanismCount is 2"),
    ]
    for args, fragment in cases:
        result = run(*args)
        output = result.stdout + result.stderr
        assert result.returncode != 0, args
        assert fragment in output and "Traceback" not in output, output


def test_offline_chain_script_registers_and_shows(tmp_path):
    chain, wallets_dir = str(tmp_path / "dev.sqlite"), str(tmp_path / "w")
    base = ["scripts/offline_chain.py", "--chain", chain]
    missing = run(*base, "register", "--wallet.name", "v", "--wallet.path", wallets_dir)
    assert missing.returncode == 2 and "--create" in missing.stderr and "Traceback" not in missing.stderr
    made = run(
        *base, "register", "--wallet.name", "v", "--wallet.path", wallets_dir, "--stake", "1000", "--permit", "--create"
    )
    assert made.returncode == 0 and made.stdout.startswith("uid 0:")
    assert run(*base, "register", "--wallet.name", "m", "--wallet.path", wallets_dir, "--create").stdout.startswith(
        "uid 1:"
    )
    shown = run(*base, "show")
    assert shown.returncode == 0 and "2 neurons" in shown.stdout
    assert "stake     1000 permit 1" in shown.stdout and "stake        0 permit 0" in shown.stdout
