"""What every reliability scenario shares: a live subnet on loopback, the miner's memory, latency figures and
the check that a refusal is a one-line JSON error."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Optional

import httpx
import numpy as np

from audionet.lib.core.auth import sign_request
from audionet.lib.core.errors import WireError
from audionet.lib.core.wallet import create_wallet
from audionet.lib.localnet import VALIDATOR_STAKE, LocalNet, MinerProcess
from audionet.lib.validator.client import miner_health


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of a process in MB, from /proc/<pid>/status (`field` "VmHWM": the most it has held)."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for pid {pid}")


def latency_figures(latencies: list[float]) -> dict:
    if not latencies:
        return {"n": 0, "max_s": None, "p95_s": None, "median_s": None}
    values = np.asarray(latencies)
    return {
        "n": len(latencies),
        "max_s": float(values.max()),
        "p95_s": float(np.percentile(values, 95)),
        "median_s": float(np.median(values)),
    }


def status_counts(statuses: list) -> dict[str, int]:
    """{"200": 12, "503": 30, ...}: JSON keys are strings; errors that had no status keep their name."""
    return {str(key): count for key, count in sorted(Counter(statuses).items(), key=lambda kv: str(kv[0]))}


def one_line_json_error(content: bytes) -> bool:
    """The miner's refusal format: exactly {"error": "<one line>"}."""
    try:
        data = json.loads(content)
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and set(data) == {"error"}
        and isinstance(data["error"], str)
        and "\n" not in data["error"]
        and bool(data["error"].strip())
    )


def raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(needed, 4096)), hard))


def log_size(path: str) -> int:
    return os.path.getsize(path) if os.path.exists(path) else 0


def log_since(path: str, start: int) -> str:
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read().decode(errors="replace")


@dataclass
class LiveMiner:
    """One real miner process (baseline backends) and the permitted validator wallet that calls it."""

    net: LocalNet
    miner: MinerProcess
    validator: object  # bittensor Wallet
    stranger: object  # a wallet with no registration
    callers: dict = field(default_factory=dict)  # scenario -> its own permitted validator wallet

    def as_caller(self, scenario: str) -> LiveMiner:
        """This miner called by the scenario's own validator hotkey: one scenario's requests do not spend
        another's rate limit."""
        return replace(self, validator=self.callers[scenario])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.miner.port}"

    @property
    def pid(self) -> int:
        return self.miner.process.pid

    def alive(self) -> bool:
        return self.miner.process.poll() is None

    def queue(self, service: str) -> dict:
        """{"busy": n, "waiting": n} of one service, from the miner's signed /v1/health."""
        return queue_of(self.url, self.validator, self.miner.hotkey, service)


def post_signed(live: LiveMiner, wallet, path: str, body: bytes, timeout: float = 120.0) -> tuple[object, float]:
    """POST `body` signed by `wallet`: (status, or the error's name, and seconds)."""
    started = time.perf_counter()
    try:
        headers = sign_request(wallet, path, body, live.miner.hotkey)
        status = httpx.post(f"{live.url}{path}", content=body, headers=headers, timeout=timeout).status_code
    except httpx.TimeoutException:
        status = "timeout"
    except httpx.HTTPError as error:
        status = type(error).__name__
    return status, time.perf_counter() - started


def queue_of(url: str, wallet, miner_hotkey: str, service: str) -> dict:
    state = miner_health(url, wallet, miner_hotkey)["services"][service]
    return {"busy": state["busy"], "waiting": state["waiting"]}


def busy(url: str, wallet, miner_hotkey: str) -> bool:
    """Whether the miner is generating anything (False when it does not answer)."""
    try:
        services = miner_health(url, wallet, miner_hotkey, timeout=1)["services"]
    except (httpx.HTTPError, WireError, ValueError):
        return False
    return any(s["busy"] for s in services.values())


@contextlib.contextmanager
def miner_path():
    """$STRESS_MINER_PYTHONPATH first on the path of the miner processes started inside (the "before" figures:
    an export of an older commit laid out as the package `audionet`); this process keeps its own modules."""
    before = os.environ.get("STRESS_MINER_PYTHONPATH")
    if not before:
        yield
        return
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = before + (os.pathsep + saved if saved else "")
    try:
        yield
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved


def start_live_miner(
    workdir: str, extra_args: tuple = (), callers: tuple = (), stakes: Optional[dict] = None
) -> LiveMiner:
    """A subnet with one validator (registered, with permit and stake), one more for each of `callers` (its stake
    from `stakes`, else the validator's), and one miner; the caller stops it."""
    net = LocalNet(workdir)
    net.add_validator()
    extra = {name: create_wallet(f"caller-{name}", "default", net.wallets) for name in callers}
    for name, wallet in extra.items():
        stake = (stakes or {}).get(name, VALIDATOR_STAKE)
        net.chain.register(
            wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address, stake=stake, validator_permit=True
        )
    with miner_path():
        miner = net.add_miner("target", extra_args=("--services", "tts,vc", *extra_args))
    try:
        net.wait_ready()
    except BaseException:
        net.stop()
        raise
    validator = create_wallet("validator", "default", net.wallets)
    stranger = create_wallet("stranger", "default", net.wallets)
    return LiveMiner(net, miner, validator, stranger, extra)


class Stopwatch:
    def __init__(self):
        self.started = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started
