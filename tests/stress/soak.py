"""The validator's memory over many rounds (issue 34): the validator neurons/validator.py runs (its flags, the
offline chain, W&B offline and the timing file on) runs `rounds` rounds back to back over a handful of fast miners
(the scale study's answer server: honest ones, and ones that send the same audio every time, so the duplicate
history fills to its bound and the gate fires) and a few bad ones (`badminers.py`: slow, absent, garbage, ...).

The validator runs in a child process of its own (`python -m tests.stress.soak`), so what is measured is its
memory alone: after every `every`-th round, before the next, it collects garbage and notes its RSS, its Python heap
(tracemalloc) and the RSS of its children (W&B's service process). After the warm-up, the growth per round over the second
half tells a leak (it keeps on) from structures filling to their bounds (they level off).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections import Counter

import numpy as np

from audionet.benchmarks.validator_scale.subnet import NETUID, start
from audionet.lib.core.wallet import create_wallet
from tests.files import REPO
from tests.stress.badminers import BadMinerServers, enlist
from tests.stress.common import rss_mb

HONEST, RECYCLERS = 2, 1  # answer-server miners; the recycler sends the same splice every time
BAD = ("slow", "dead", "garbage", "replay", "wrong_signature", "hangup", "oversized", "drip")
# Speech and music as the scale study measured them; voice clone's cost is its speaker model (1.6 s a batch here),
# an evaluator, not the validator's own work.
SERVICES = ("tts", "music")
TIMEOUT_S = 0.5  # every service's: a slow miner holds each round this long
SEED = 7


def children_rss_mb() -> float:
    """RSS of this process's children and theirs (W&B's service process)."""
    total, pending = 0.0, [os.getpid()]
    while pending:
        pid = pending.pop()
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    kids = [int(k) for k in handle.read().split()]
            except OSError:
                continue
            for kid in kids:
                try:
                    total += rss_mb(kid)
                except (OSError, RuntimeError):
                    continue  # gone meanwhile
                pending.append(kid)
    return total


class Sampler:
    """In the validator's process: one JSON line to `path` after every `every`-th round, between rounds (the
    round's answers gone), and one at the end."""

    def __init__(self, validator, path: str, every: int):
        self.validator, self.path, self.every = validator, path, every
        self.write(0)

    def wrap(self, run_round):
        async def sampled(client) -> list:
            await run_round(client)  # its answers are dropped here, as Validator.run drops them
            if self.validator.state.round % self.every == 0:
                self.write(self.validator.state.round)
            return []

        return sampled

    def finish(self) -> None:
        history = {s: len(p) for s, p in self.validator.judge.duplicates.history.items()}
        self.write(self.validator.state.round, final=True, history=history)  # after W&B has finished

    def write(self, round_: int, **extra) -> None:
        gc.collect()  # what a collection frees is not growth
        sample = {
            "round": round_,
            "time": time.time(),
            "rss_mb": rss_mb(os.getpid()),
            "peak_mb": rss_mb(os.getpid(), "VmHWM"),  # the most it has held since it started
            "heap_mb": tracemalloc.get_traced_memory()[0] / 2**20,
            "children_mb": children_rss_mb(),
            **extra,
        }
        with open(self.path, "a") as handle:
            handle.write(json.dumps(sample) + "\n")


def child(argv: list[str]) -> int:
    """`SAMPLES EVERY -- <validator flags>`: the validator's own entry point, with a Sampler beside it."""
    samples, every, flags = argv[0], int(argv[1]), argv[argv.index("--") + 1 :]
    tracemalloc.start()
    from audionet.lib.core.neuron import run_entry_point
    from audionet.neurons import validator as entry

    def run(args, log) -> int:
        validator, telemetry = entry.open_validator(args, log)
        sampler = Sampler(validator, samples, every)
        validator.run_round = sampler.wrap(validator.run_round)
        try:
            return entry.serve(validator, telemetry, args.neuron_rounds)
        finally:
            sampler.finish()

    return run_entry_point("validator", entry.build_parser(), run, flags)


def validator_flags(
    subnet, workdir: str, rounds: int, services: tuple, timeout_s: float | None = TIMEOUT_S, sample_size: int = 64
) -> list:
    """The soak's validator flags; `timeout_s` None: each service's own timeout."""
    timeouts = [arg for s in services for arg in (f"--neuron.timeout.{s}", f"{timeout_s:g}")] if timeout_s else []
    return [
        *("--netuid", str(NETUID), "--subtensor.network", f"offline:{subnet.chain_path}"),
        *(
            "--wallet.name",
            "validator",
            "--wallet.hotkey",
            "default",
            "--wallet.path",
            os.path.join(workdir, "wallets"),
        ),
        *("--neuron.state_dir", os.path.join(workdir, "validator"), "--neuron.rounds", str(rounds)),
        # Every miner every round (a round interval of 0 would leave a budget for one).
        *("--neuron.round_interval", "0", "--neuron.round_budget", "inf", "--neuron.sample_size", str(sample_size)),
        *("--neuron.epoch_length", "1", "--neuron.seed", str(SEED)),
        *("--neuron.eligible_after", "1", "--neuron.ready_error", "inf"),  # weights from the first round on
        *("--neuron.services", ",".join(services), *timeouts),
        # A flush every 2 s over a soak of minutes: about as many per round as a validator's every 60 s at 12 s
        # a round.
        *("--telemetry.interval", "2", "--eval.profile", "offline"),
        # The scale study's cheap evaluators: the validator's own work is what is soaked (the speaker model has
        # no "none").
        *(arg for kind in ("asr", "mos", "sounds", "tags", "notes") for arg in (f"--eval.{kind}", "none")),
    ]


def run_validator(
    workdir: str,
    subnet,
    rounds: int,
    every: int,
    services: tuple,
    progress,
    timeout_s: float | None = TIMEOUT_S,
    sample_size: int = 64,
) -> tuple[int, list[dict], str]:
    """The child validator's exit status, its samples and its log."""
    samples, log_path = os.path.join(workdir, "samples.jsonl"), os.path.join(workdir, "validator.log")
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=workdir, WANDB_SILENT="true", PYTHONUNBUFFERED="1")
    # W&B writes its service's address into the environment of a process that used it (pytest, after the telemetry
    # tests): without this the validator would join that service instead of starting its own, as a validator does.
    env.pop("WANDB_SERVICE", None)
    if older := os.environ.get("STRESS_VALIDATOR_PYTHONPATH"):  # "before" figures: an older commit's validator
        env["PYTHONPATH"] = os.pathsep.join(path for path in (older, env.get("PYTHONPATH")) if path)
    command = [sys.executable, "-m", "tests.stress.soak", samples, str(every), "--"]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command + validator_flags(subnet, workdir, rounds, services, timeout_s, sample_size),
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            seen = 0
            while process.poll() is None:
                time.sleep(1.0)
                lines = read_lines(samples)
                for sample in lines[seen:]:
                    progress(sample)
                seen = len(lines)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
    with open(log_path, encoding="utf-8", errors="backslashreplace") as handle:
        return process.returncode, read_lines(samples), handle.read()


def read_lines(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.endswith("\n")]


def gates(rounds_path: str) -> dict[str, int]:
    """Answers by the gate that fired over the whole soak ("none": judged)."""
    counted: Counter = Counter()
    with open(rounds_path) as handle:
        for line in handle:
            counted.update(row["gate_name"] or "none" for row in json.loads(line)["results"])
    return dict(counted.most_common())


def fit(rounds: list[int], values: list[float]) -> dict:
    """Growth of `values` (MB) after the warm-up: in all, and per round (KB) by a line through each half."""
    half = len(rounds) // 2
    slope = lambda a, b: float(np.polyfit(rounds[a:b], values[a:b], 1)[0]) * 1024 if b - a > 1 else 0.0  # noqa: E731
    return {
        "start": round(values[0], 2),
        "end": round(values[-1], 2),
        "growth": round(values[-1] - values[0], 2),
        "second_half_rounds": rounds[-1] - rounds[half],
        "kb_per_round_first_half": round(slope(0, half + 1), 3),
        "kb_per_round_second_half": round(slope(half, len(values)), 3),
    }


def run_soak(
    workdir: str,
    rounds: int = 1000,
    every: int = 25,
    warmup: int = 200,
    services: tuple = SERVICES,
    progress=lambda sample: None,
) -> dict:
    """`rounds` rounds of the validator over the fast and the bad miners, asking for `services`; its memory every
    `every` rounds and the growth after `warmup` rounds."""
    started = time.perf_counter()
    subnet = start(workdir, HONEST + RECYCLERS, SEED, recyclers=RECYCLERS)
    try:
        validator = subnet.wallet.hotkey.ss58_address
        stranger = create_wallet("stranger", "default", os.path.join(workdir, "wallets"))
        bad = enlist(subnet.chain_path, NETUID, os.path.join(workdir, "wallets"), BAD, validator, TIMEOUT_S, stranger)
        with BadMinerServers(bad):
            status, samples, log = run_validator(workdir, subnet, rounds, every, services, progress)
    finally:
        subnet.stop()
    final = samples[-1] if samples and samples[-1].get("final") else {}
    kept = [s for s in samples if s["round"] >= warmup and not s.get("final")]
    done = final.get("round", 0)
    at = [s["round"] for s in kept]
    return {
        "rounds": rounds,
        "completed": done,
        "exit": status,
        "seconds": round(time.perf_counter() - started, 1),
        "miners": {"honest": HONEST, "recyclers": RECYCLERS, "bad": list(BAD)},
        "services": list(services),
        "timeout_s": TIMEOUT_S,
        "warmup": warmup,
        "every": every,
        "samples": [{k: (round(v, 2) if isinstance(v, float) else v) for k, v in s.items()} for s in samples],
        "rss_mb": fit(at, [s["rss_mb"] for s in kept]) if len(kept) > 1 else None,
        "heap_mb": fit(at, [s["heap_mb"] for s in kept]) if len(kept) > 1 else None,
        "children_mb": fit(at, [s["children_mb"] for s in kept]) if len(kept) > 1 else None,
        "history": final.get("history", {}),
        "gates": gates(os.path.join(workdir, "validator", "rounds.jsonl")) if done else {},
        "failed_rounds": log.count("round failed"),
        "tracebacks": log.count("Traceback (most recent call last)"),
    }


if __name__ == "__main__":
    raise SystemExit(child(sys.argv[1:]))
