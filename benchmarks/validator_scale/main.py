"""Validator scale study: what one round costs the validator as the subnet grows, stage by stage.

Real signed HTTP on loopback to N lightweight miners (one process, `server.py`, serving valid spliced answers in
milliseconds, so the validator is what is measured), the validator's own round (`Validator.run_round`: query,
decode, gates, duplicates, evaluators, state, logging) with the chosen evaluation profile (offline here), VC
references read from a folder as on a real network. Before each N the duplicate history is filled to its bound
with distinct answers, as it is on a running validator. Per round: wall and CPU time, each stage's seconds
(stages overlap where the validator evaluates answers as they arrive), peak memory and the load average.

    audionet-bench validator-scale [--miners 16,64,256] [--rounds 1] [--services tts,vc,music]

Writes <out>/<device-slug>/validator-scale.{json,md,png} (`--name` for another stem).
"""

from __future__ import annotations

import asyncio
import math
import os
import platform
import tempfile
import time
from collections import Counter

import numpy as np

from audionet.benchmarks.common.flags import add_service_flags, one_line_errors, study_parser
from audionet.benchmarks.common.results import command_line, write_result
from audionet.benchmarks.validator_scale import report
from audionet.benchmarks.validator_scale.answers import Bank, answer
from audionet.lib.core.config import CommaList, Parser, positive_int, split_list
from audionet.lib.core.devices import cpu_model_name, describe_device
from audionet.lib.core.timing import Timer
from audionet.lib.services import registry

WARMUP_MINERS = 4
ROUND_STAGES = ("network", "state", "logging", "evaluation")  # the validator's own, not per service


def build_parser(prog: str) -> Parser:
    from audionet.models.eval.profiles import add_eval_flags

    parser = study_parser(prog, __doc__)
    parser.add_argument(
        "--miners", type=CommaList(convert=positive_int, what="miner count"), default="16,64,256", help="N per step"
    )
    parser.add_argument("--rounds", type=positive_int, default=1, help="measured rounds per N")
    parser.add_argument(
        "--spread", type=float, default=0.0, help="miners answer after a random 0-S s (default: all at once)"
    )
    parser.add_argument("--name", default="validator-scale", help="stem of the result files")
    add_service_flags(parser)
    add_eval_flags(parser, device_default="cpu")
    return parser


def main(argv: list[str], prog: str = "audionet-bench validator-scale") -> int:
    args = build_parser(prog).parse_args(argv)
    return one_line_errors(prog, lambda: measure(args, command_line(prog, argv)))


def peak_rss_reset() -> None:
    """Start a new peak-memory window (Linux: VmHWM is reset by writing 5 to clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def stage_seconds(timer: Timer) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(seconds per stage over the round, seconds per service and stage); round trips left out (they are the
    miners' time, and the network stage covers them)."""
    total: Counter = Counter()
    by_service: dict[str, Counter] = {}
    for key, stats in timer.snapshot().items():
        if key.stage.startswith("roundtrip") or stats.count == 0:
            continue
        seconds = stats.count * stats.avg_s
        total[key.stage] += seconds
        if key.stage not in ROUND_STAGES:
            by_service.setdefault(key.service, Counter())[key.stage] += seconds
    return dict(total), {service: dict(stages) for service, stages in by_service.items()}


def fill_history(judge, sources: dict, bank: Bank, rng) -> None:
    """Every service's duplicate history at its bound, with distinct answers (a running validator's)."""
    from audionet.lib.scoring.duplicates import fingerprint

    size = judge.duplicates.history_size
    for name, source in sources.items():
        service = registry.get(name)
        prints = [fingerprint(answer(bank, service.draw(rng, source))) for _ in range(size)]
        judge.duplicates.remember(name, [f"earlier {n}" for n in range(size)], prints)


def duplicates_alone(history: dict, scored) -> dict[str, float]:
    """Per service, the CPU seconds of the round's duplicate check re-run alone on its answers (fingerprints and the
    search against the history the round met), with nothing else running: the round's own stage timings are wall
    time on a shared machine, stretched by whatever else runs."""
    from audionet.lib.scoring.duplicates import DuplicateFinder, fingerprint

    finder, seconds = DuplicateFinder(), {}
    for service, past in history.items():
        finder.history[service] = past
        audios = [s.answer.audio for s in scored if s.answer.service == service and s.answer.audio is not None]
        started = time.process_time()
        found = finder.open(service)
        for n, audio in enumerate(audios):
            finder.check(found, f"#{n}", fingerprint(audio))
        finder.close(found, remember=False)
        seconds[service] = time.process_time() - started
    return seconds


async def one_round(validator, client, miners: int) -> dict:
    validator.settings.sample_size = miners
    history = {service: past.copy() for service, past in validator.judge.duplicates.history.items()}
    validator.timer = timer = Timer("validator", window=100_000)
    load = os.getloadavg()[0]
    peak_rss_reset()
    cpu, started = time.process_time(), time.perf_counter()
    scored = await validator.run_round(client)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    stages, by_service = stage_seconds(timer)
    gates = Counter((s.gate or "").split(":")[0].split(" (")[0] for s in scored if s.gate)
    errors = Counter(s.answer.error.split(":")[0][:60] for s in scored if s.answer.error)
    return {
        "miners": miners,
        "answers": len(scored),
        "gated": dict(gates),
        "errors": dict(errors),  # why queries failed (gate "no valid answer"), by the first words
        "audio_s": sum(s.answer.audio.seconds for s in scored if s.answer.audio is not None),
        "round_s": wall,
        "cpu_s": cpu,
        "stages": stages,
        "by_service": by_service,
        "duplicates_alone_cpu_s": await asyncio.to_thread(duplicates_alone, history, scored),
        "peak_rss_mb": peak_rss_mb(),
        "load_average": [load, os.getloadavg()[0]],
    }


async def run_study(validator, subnet, judge, args, tick) -> list[dict]:
    rng = np.random.default_rng(args.seed + 1)
    rows = []
    async with validator.miner_client() as client:
        await one_round(validator, client, min(WARMUP_MINERS, max(args.miners)))  # warm-up, not measured
        tick()
        for miners in args.miners:
            for _ in range(args.rounds):
                sources = {name: validator.sources.get(name) for name in args.services}
                await asyncio.to_thread(fill_history, judge, sources, subnet.bank, rng)
                rows.append(await one_round(validator, client, miners))
                tick()
    return rows


def measure(args, command: str) -> int:
    from rich.progress import Progress

    from audionet.benchmarks.validator_scale.subnet import start
    from audionet.lib.prompts.references import FileReferences
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.validator.loop import Validator, ValidatorSettings
    from audionet.models.eval.profiles import EvalSettings

    specs = EvalSettings.from_flags(args).specs(real_network=False)
    info = describe_device(split_list(args.eval_devices)[0])  # the results' folder: the first evaluation device
    with tempfile.TemporaryDirectory(prefix="audionet-validator-scale-") as workdir:
        answers = WARMUP_MINERS + args.rounds * sum(args.miners)
        subnet = start(workdir, max(args.miners), args.seed, premade=answers + answers // 5, spread_s=args.spread)
        try:
            judge = Judge.load(specs, devices=args.eval_devices)
            settings = ValidatorSettings(
                state_dir=os.path.join(workdir, "validator"),
                services=tuple(args.services),
                seed=args.seed,
                round_budget_s=math.inf,  # every miner every round: what a round over N costs is what is measured
            )
            # every service that takes a reference clip draws it from the study's recordings
            sources = {
                name: FileReferences(subnet.references)
                for name in args.services
                if "reference" in registry.get(name).inputs
            }
            validator = Validator(subnet.wallet, subnet.chain(), settings, sources, judge=judge)
            with Progress() as progress:
                task = progress.add_task("validator rounds", total=1 + len(args.miners) * args.rounds)
                rows = asyncio.run(run_study(validator, subnet, judge, args, lambda: progress.advance(task)))
        finally:
            subnet.stop()
    result = {
        "device": info.slug,
        "cpu": cpu_model_name(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "evaluators": judge.evaluators.describe(),
        "services": list(args.services),
        "rounds": args.rounds,
        "spread_s": args.spread,
        "history_size": judge.duplicates.history_size,
        "rows": rows,
    }
    text = report.markdown(result)
    write_result(args.out, info.slug, args.name, result, text, command, lambda p: report.plot(result, p))
    print(text)
    return 0
