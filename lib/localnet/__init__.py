"""Processes of a local subnet: offline chain file, wallets, miners, validator (what they found: `results.py`).

Used by `audionet-localnet` and by the end-to-end tests, so both run the very
same processes a user would start by hand.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

import httpx

from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.protocol import HEALTH_PATH
from audionet.lib.core.subnet_rules import DEFAULT_MAX_UIDS, DEFAULTS, DEVELOPMENT, SubnetRules, largest_layout
from audionet.lib.core.wallet import create_wallet
from audionet.lib.localnet.results import NETUID, Results
from audionet.lib.miner.settings import AxonSettings, MinerSettings
from audionet.lib.services import registry

VALIDATOR_STAKE = 1000.0
# What localnet's miners run, in turn (miner i gets ROSTER[i % 3]): the best offline backend of every
# service, the cheapest one that runs from the install alone, and the adversary catalogue's "1 s loop"
# cheat on top of that. A --<service>.model flag replaces that service's backend for every miner.
ROSTER = (
    ("best offline", lambda service: service.offline_backend),
    ("cheap baseline", lambda service: service.default_backend),
    ("cheat: 1 s loop", lambda service: f"loop:{service.default_backend}"),
)


def roster_models(index: int, overrides: Optional[dict] = None) -> tuple[str, dict[str, str]]:
    """(label, {service: spec}) for the miner at `index`."""
    label, pick = ROSTER[index % len(ROSTER)]
    overrides = {name: spec for name, spec in (overrides or {}).items() if spec}
    models = {service.name: overrides.get(service.name) or pick(service) for service in registry.all_services()}
    return (label if not overrides else f"{label}, with flags"), models


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class MinerProcess:
    name: str
    uid: int
    hotkey: str
    port: int
    models: dict
    process: subprocess.Popen
    log_path: str
    args: list = field(default_factory=list)
    label: str = ""  # what it runs, for people (e.g. the roster's "cheap baseline")


@dataclass
class LocalNet(Results):
    workdir: str
    block_seconds: float = 1.0
    miners: list[MinerProcess] = field(default_factory=list)
    validators: list[subprocess.Popen] = field(default_factory=list)
    validator_uid: Optional[int] = None
    validator_hotkey: Optional[str] = None
    miner_count: int = 0  # miners this net will run, when known before they are added (sizes the timeouts)
    mechanisms: int = 1  # incentive mechanisms the subnet runs (a default subnet of 256 uids runs one)
    rules: SubnetRules = DEVELOPMENT  # the chain's hyperparameters (root's and the owner's on a local chain)

    def __post_init__(self) -> None:
        os.makedirs(self.logs_dir, exist_ok=True)
        self.chain_path = os.path.join(self.workdir, "chain.sqlite")
        self.wallets = os.path.join(self.workdir, "wallets")
        self.state_dir = os.path.join(self.workdir, "validator")
        self.chain = OfflineChain(self.chain_path, NETUID, block_seconds=self.block_seconds, rules=self.rules)
        if self.mechanisms * self.chain.rules.max_uids > DEFAULT_MAX_UIDS:  # the owner makes room, as on chain
            self.chain.set_rules(max_uids=DEFAULT_MAX_UIDS // self.mechanisms)
        self.chain.set_mechanism_count(self.mechanisms)  # subnet_rules.RuleError where subtensor would refuse

    def layout(self) -> str:
        """The subnet's mechanisms and rules, and what a default subnet accepts, for people."""
        rules = self.chain.rules
        default = largest_layout(DEFAULT_MAX_UIDS, DEFAULTS)
        return (
            f"{self.mechanisms} mechanism(s) for {len(registry.names())} services at max_uids {rules.max_uids} "
            f"(a default subnet: MaxMechanismCount {DEFAULTS.max_mechanisms} and max_uids x mechanisms <= "
            f"{DEFAULT_MAX_UIDS}, so {default} at {DEFAULT_MAX_UIDS} uids); {rules.describe()}"
        )

    def mechanism_args(self) -> list[str]:
        """The validator's `--neuron.mechanisms` where the subnet runs fewer mechanisms than services but more than
        one: the first services share mechanism 0, each of the last has its own (two: tts and vc on 0, music on 1)."""
        names = registry.names()
        if self.mechanisms == 1 or self.mechanisms >= len(names):
            return []
        shared = len(names) - self.mechanisms
        return ["--neuron.mechanisms", ",".join(f"{s}:{max(0, i - shared)}" for i, s in enumerate(names))]

    @property
    def logs_dir(self) -> str:
        return os.path.join(self.workdir, "logs")

    def common_args(self, name: str) -> list[str]:
        return [
            "--netuid",
            str(NETUID),
            "--subtensor.network",
            f"offline:{self.chain_path}",
            "--wallet.name",
            name,
            "--wallet.hotkey",
            "default",
            "--wallet.path",
            self.wallets,
            "--telemetry.dir",
            os.path.join(self.workdir, "telemetry", name),
        ]

    def add_validator(self, name: str = "validator") -> str:
        wallet = create_wallet(name, "default", self.wallets)
        self.validator_hotkey = wallet.hotkey.ss58_address
        self.validator_uid = self.chain.register(
            self.validator_hotkey, wallet.coldkeypub.ss58_address, stake=VALIDATOR_STAKE, validator_permit=True
        )
        return self.validator_hotkey

    def add_miner(
        self, name: str, models: Optional[dict] = None, extra_args: tuple = (), label: str = ""
    ) -> MinerProcess:
        wallet = create_wallet(name, "default", self.wallets)
        hotkey = wallet.hotkey.ss58_address
        uid = self.chain.register(hotkey, wallet.coldkeypub.ss58_address)
        port = free_port()
        args = (
            self.common_args(name)
            + AxonSettings(ip="127.0.0.1", port=port).as_flags()
            + MinerSettings(sync_interval=2.0, timeouts=self.timeouts()).as_flags()
        )
        args += registry.BackendSettings(models=dict(models or {})).as_flags()
        log_path = os.path.join(self.logs_dir, f"{name}.log")
        process = self._spawn("audionet.neurons.miner", args + list(extra_args), log_path)
        miner = MinerProcess(
            name, uid, hotkey, port, dict(models or {}), process, log_path, args + list(extra_args), label
        )
        self.miners.append(miner)
        return miner

    def restart_miner(self, miner: MinerProcess) -> None:
        """`kill -9` a miner's process group and start it again with the same flags and port."""
        os.killpg(miner.process.pid, signal.SIGKILL)
        miner.process.wait()
        miner.process = self._spawn("audionet.neurons.miner", miner.args, miner.log_path)

    def _spawn(self, module: str, args: list[str], log_path: str) -> subprocess.Popen:
        # W&B never goes online from a localnet; its offline runs stay in the workdir.
        env = dict(
            os.environ, PYTHONUNBUFFERED="1", WANDB_MODE=os.environ.get("WANDB_MODE", "offline"), WANDB_DIR=self.workdir
        )
        with open(log_path, "ab") as log:
            # The installed package runs from any folder; the working directory stays on the
            # children's path so an operator's `py:` backend module next to it imports too.
            return subprocess.Popen(
                [sys.executable, "-m", module, *args],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Block until every miner answers /v1/health (or raise with its log tail)."""
        deadline = time.monotonic() + timeout
        pending = list(self.miners)
        while pending:
            for miner in list(pending):
                if miner.process.poll() is not None:
                    raise RuntimeError(f"{miner.name} exited with {miner.process.returncode}:\n{tail(miner.log_path)}")
                try:
                    if httpx.get(f"http://127.0.0.1:{miner.port}{HEALTH_PATH}", timeout=1.0).status_code == 200:
                        pending.remove(miner)
                except httpx.HTTPError:
                    pass
            if pending and time.monotonic() > deadline:
                raise TimeoutError(f"miners not ready after {timeout:g} s: {[m.name for m in pending]}")
            time.sleep(0.3)

    def timeouts(self) -> dict[str, float]:
        """Every miner here shares this machine's cores, where on a real subnet each has its own host:
        the validator's per-request timeouts (and the miners' generation bounds, `--miner.timeout.<service>`)
        stretch by miners per 2 cores, so a busy 2-core box does not read as slow miners."""
        miners = max(len(self.miners), self.miner_count)
        scale = max(1.0, 2.0 * miners / (os.cpu_count() or 1))
        return {service.name: service.timeout_s * scale for service in registry.all_services()}

    def validator_command(self, rounds: int, extra_args: tuple | list = ()) -> list[str]:
        return self.common_args("validator") + [
            "--neuron.state_dir",
            self.state_dir,
            "--neuron.rounds",
            str(rounds),
            "--neuron.epoch_length",
            "1",
            "--neuron.round_interval",
            "1",
            "--neuron.round_budget",
            "inf",  # every miner every round, however long this machine takes to judge them
            "--neuron.ready_error",
            "inf",  # a development net publishes from the first round: a few rounds are all the evidence there is
            *(
                arg
                for service, seconds in self.timeouts().items()
                for arg in (f"--neuron.timeout.{service}", f"{seconds:g}")
            ),
            *self.mechanism_args(),
            *extra_args,
        ]

    def start_validator(self, rounds: int, extra_args: tuple | list = ()) -> subprocess.Popen:
        process = self._spawn(
            "audionet.neurons.validator",
            self.validator_command(rounds, extra_args),
            os.path.join(self.logs_dir, "validator.log"),
        )
        self.validators.append(process)
        return process

    def run_validator(self, rounds: int, extra_args: tuple | list = (), timeout: float = 900.0) -> int:
        """Run the validator for `rounds` rounds, its exit code. A progress bar on a terminal; otherwise
        (CI, a log file) one line per round."""
        from rich.progress import Progress

        process = self.start_validator(rounds, extra_args)
        deadline = time.monotonic() + timeout
        printed = 0
        with Progress(transient=True, disable=not sys.stdout.isatty()) as progress:
            task = progress.add_task("validator rounds", total=rounds)
            while process.poll() is None and time.monotonic() < deadline:
                records = self.round_records()
                progress.update(task, completed=len(records))
                if not sys.stdout.isatty():
                    for record in records[printed:]:
                        print(self.round_line(record, rounds), flush=True)
                    printed = len(records)
                time.sleep(0.5)
        if not sys.stdout.isatty():
            for record in self.round_records()[printed:]:
                print(self.round_line(record, rounds), flush=True)
        if process.poll() is None:
            stop_process(process)
            return 124
        return process.returncode

    def stop(self) -> None:
        """Stop every process this net started (they run in their own sessions,
        so a Ctrl-C in the terminal does not reach them by itself)."""
        for process in self.validators + [miner.process for miner in self.miners]:
            stop_process(process)


def stop_process(process: subprocess.Popen, grace: float = 5.0) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def tail(path: str, lines: int = 20) -> str:
    with open(path, errors="replace") as handle:
        return "".join(handle.readlines()[-lines:])
