import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest

from audionet.lib.core.audio import Audio

FOLDER_MARKS = {"e2e": pytest.mark.e2e, "stress": pytest.mark.slow}


def pytest_collection_modifyitems(items):
    """Every test under tests/e2e is e2e and every test under tests/stress is slow, so a new test there needs
    no mark to stay out of `make test-fast`."""
    for item in items:
        folder = item.path.parent.name
        if folder in FOLDER_MARKS:
            item.add_marker(FOLDER_MARKS[folder])


def tone(seconds: float = 2.0, rate: int = 16_000, freq: float = 220.0, level: float = 0.5) -> Audio:
    t = np.arange(int(seconds * rate)) / rate
    return Audio(level * np.sin(2 * np.pi * freq * t), rate)


@pytest.fixture
def wallets(tmp_path):
    """Password-less wallets made on demand: wallets('name') -> bt.Wallet."""
    from audionet.lib.core.wallet import create_wallet

    return lambda name: create_wallet(name, "default", str(tmp_path / "wallets"))


@pytest.fixture(scope="session")
def speech():
    """speech(text, voice=None) -> Audio from the best offline TTS the tests use."""
    from tests.speech import speech as render

    return render


@pytest.fixture
def wandb_offline(tmp_path, monkeypatch):
    """W&B in offline mode, its files under tmp_path (returned)."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    return tmp_path
