"""The scale study's subnet: an offline chain with one validator and N lightweight miners, every miner's
endpoint a port of one answer-server process (`server.py`), and voice-clone references as the validator on a
real network reads them (a folder of clips)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from audionet.benchmarks.validator_scale.answers import Bank
from audionet.lib.core.audio import encode_flac
from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.subnet_rules import DEVELOPMENT
from audionet.lib.core.wallet import create_wallet

NETUID = 1
VALIDATOR_STAKE = 1_000.0
REFERENCES = 8
READY_TIMEOUT_S = 120.0


@dataclass
class Subnet:
    chain_path: str
    wallet: object  # the validator's
    references: str  # a folder of reference clips and transcripts
    server: subprocess.Popen
    bank: Bank  # what the miners splice their answers from

    def chain(self) -> OfflineChain:
        return OfflineChain(self.chain_path, NETUID, wallet=self.wallet)

    def stop(self) -> None:
        if self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()


def write_references(folder: str, seed: int) -> str:
    """`REFERENCES` espeak clips with their transcripts, as `--vc.references` reads them."""
    from audionet.lib.prompts import make_tts_prompt
    from audionet.models.baselines.espeak import EspeakSynthesizer

    os.makedirs(folder, exist_ok=True)
    rng, espeak = np.random.default_rng(seed), EspeakSynthesizer()
    voices = list(espeak.voices) or [None]
    for n in range(REFERENCES):
        text = make_tts_prompt(rng, max_words=20).text
        with open(os.path.join(folder, f"ref{n}.flac"), "wb") as handle:
            handle.write(encode_flac(espeak.synthesize(text, voice=voices[n % len(voices)])))
        with open(os.path.join(folder, f"ref{n}.txt"), "w") as handle:
            handle.write(text + "\n")
    return folder


def start(workdir: str, miners: int, seed: int, premade: int = 0, spread_s: float = 0.0, recyclers: int = 0) -> Subnet:
    """Register a validator and `miners` miners, start the answer server (`premade` answers per service made
    ahead, each answer `spread_s` late at most, the first `recyclers` miners sending the same audio every time),
    publish its ports as endpoints."""
    bank, folder = Bank.make(seed), os.path.join(workdir, "bank")
    bank.save(folder)
    ready = os.path.join(workdir, "ready.json")
    log = open(os.path.join(workdir, "server.log"), "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "audionet.benchmarks.validator_scale.server"]
        + ["--bank", folder, "--miners", str(miners), "--ready", ready]
        + ["--premade", str(premade), "--spread", str(spread_s), "--recyclers", str(recyclers)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    wallet = create_wallet("validator", "default", os.path.join(workdir, "wallets"))
    chain_path = os.path.join(workdir, "chain.sqlite")
    chain = OfflineChain(
        chain_path, NETUID, rules=DEVELOPMENT
    )  # the validator's work is measured, not the chain's rules
    chain.register(
        wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address, stake=VALIDATOR_STAKE, validator_permit=True
    )
    subnet = Subnet(chain_path, wallet, write_references(os.path.join(workdir, "references"), seed), server, bank)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not os.path.exists(ready):
        if server.poll() is not None or time.monotonic() > deadline:
            subnet.stop()
            raise ConfigError(f"the answer server did not start (see {log.name})")
        time.sleep(0.1)
    with open(ready) as handle:
        endpoints = json.load(handle)
    for hotkey, port in endpoints:
        chain.register(hotkey, hotkey)
        miner = OfflineChain(chain_path, NETUID, wallet=SimpleNamespace(hotkey=SimpleNamespace(ss58_address=hotkey)))
        asyncio.run(miner.serve("127.0.0.1", port))
    return subnet
