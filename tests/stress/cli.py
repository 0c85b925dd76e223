"""Command line of the stress suite: run the scenarios at full size, write <out>/<device-slug>/reliability.{json,md}."""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from audionet.benchmarks.common.results import command_line, write_result
from audionet.lib.core.devices import device_slug
from tests.stress import (
    answers,
    crash,
    findings,
    floods,
    generation,
    holes,
    load,
    overhead,
    report,
    soak,
    thresholds,
    validator_round,
)
from tests.stress.common import start_live_miner
from tests.stress.flags import SCENARIOS, build_parser, hole_sizes
from tests.stress.hostile import run_hostile
from tests.stress.report import GROUPS

LOW_STAKE = 10.0  # the caller that sends over-long text (issue 24: a low-stake validator)
KOKORO_TIMEOUT_S = 8.0  # the Kokoro miner's --miner.timeout.tts: a 23 s text takes longer on this CPU


@contextmanager
def counter(description: str, total: int) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr; yields tick(n=1)."""
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True)) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)


def attempt(scenarios: dict, key: str, run, *path: str) -> None:
    """Run one scenario; an exception is kept as its result (and fails its threshold) so the others still run."""
    target = scenarios
    for part in path:
        target = target.setdefault(part, {})
    try:
        target[key] = run()
    except Exception as error:  # a benchmark reports, it does not stop at the first broken scenario
        target[key] = {"error": f"{type(error).__name__}: {error}"[:500]}


def run_scenarios(args, workdir: str) -> dict:
    chosen = [s for s in args.scenarios.split(",") if s]
    scenarios: dict = {}
    if {"hostile", "concurrent", "idle", "floods", "generation", "crash", "memory"} & set(chosen):
        # No rate limit here: 10,000 hostile requests must each reach the layer they attack (refunds stop at it).
        live = start_live_miner(
            os.path.join(workdir, "live"),
            ("--miner.rate_limit", "1000000"),
            callers=(*SCENARIOS, "low"),
            stakes={"low": LOW_STAKE},
        )
        try:
            if "hostile" in chosen:
                with counter("hostile requests", args.hostile) as tick:
                    attempt(scenarios, "hostile", lambda: run_hostile(live.as_caller("hostile"), args.hostile, tick))
            if "concurrent" in chosen:
                with counter("concurrent requests", args.concurrent * args.waves) as tick:
                    attempt(
                        scenarios,
                        "concurrent",
                        lambda: load.run_concurrent(
                            live.as_caller("concurrent"), args.concurrent, args.waves, progress=tick
                        ),
                    )
            if "idle" in chosen:
                with counter("idle connections", args.idle) as tick:
                    attempt(scenarios, "idle", lambda: load.run_idle(live.as_caller("idle"), args.idle, progress=tick))
            if "floods" in chosen:
                run_floods(args, live.as_caller("floods"), scenarios)
            if "generation" in chosen:
                print("over-long text and callers that leave (espeak)", file=sys.stderr)
                caller = run_overlong(live, "espeak", scenarios)
                attempt(scenarios, "leavers", lambda: generation.run_leavers(caller), "generation")
            if "memory" in chosen:
                print(f"memory over {args.memory:,} requests", file=sys.stderr)
                attempt(scenarios, "memory", lambda: findings.run_memory(live, live.callers["memory"], args.memory))
            if "crash" in chosen:
                print("kill -9 of the miner mid-generation", file=sys.stderr)
                attempt(
                    scenarios,
                    "miner_mid_generation",
                    lambda: crash.kill_miner_mid_generation(live.as_caller("crash")),
                    "crash",
                )
        finally:
            live.net.stop()
    if "generation" in chosen:
        run_kokoro(os.path.join(workdir, "kokoro"), scenarios)
        print("queueing overhead of the scheduler", file=sys.stderr)
        attempt(scenarios, "overhead", overhead.run_overhead, "generation")
    if "holes" in chosen:
        attempt(
            scenarios,
            "holes",
            lambda: holes.run_holes(
                os.path.join(workdir, "holes"),
                args.rounds,
                hole_sizes(args),
                progress=lambda m: print(m, file=sys.stderr),
            ),
        )
        print("issue 37: the longest texts the length check accepts, on Kokoro", file=sys.stderr)
        attempt(scenarios, "kokoro_limit", lambda: run_kokoro_limit(os.path.join(workdir, "kokoro-limit")))
    if "round" in chosen:
        print(f"a validator round over {args.miners} miners", file=sys.stderr)
        attempt(
            scenarios,
            "round",
            lambda: validator_round.run_round(os.path.join(workdir, "round"), args.miners, args.honest),
        )
    if "soak" in chosen:
        with counter("validator rounds (soak)", args.soak_rounds) as tick:
            size = (args.soak_rounds, args.soak_every, args.soak_warmup)
            progress = lambda sample: tick(sample["round"] and not sample.get("final") and args.soak_every)  # noqa: E731
            attempt(scenarios, "soak", lambda: soak.run_soak(os.path.join(workdir, "soak"), *size, progress=progress))
    if "answers" in chosen:
        size = answers.FULL | {"bombs": args.bombs, "compressed": args.compressed, "fat_health": args.fat_health}
        only = [p for p in args.phases.split(",") if p] or None
        attempt(
            scenarios,
            "answers",
            lambda: answers.run_answers(
                os.path.join(workdir, "answers"),
                args.answer_rounds,
                size,
                only,
                progress=lambda m: print(m, file=sys.stderr),
            ),
        )
    if "crash" in chosen:
        with counter("kill -9 mid-save", args.save_kills) as tick:
            saves = os.path.join(workdir, "saves")
            os.makedirs(saves)
            attempt(scenarios, "mid_save", lambda: crash.kill_mid_save(saves, args.save_kills, progress=tick), "crash")
        print("kill -9 of the validator mid-round", file=sys.stderr)
        attempt(
            scenarios, "mid_round", lambda: crash.kill_validator_mid_round(os.path.join(workdir, "midround")), "crash"
        )
    return scenarios


def run_floods(args, live, scenarios: dict) -> None:
    print(f"{args.lockout} head-only connections held while the validator asks {args.probes} times", file=sys.stderr)
    attempt(scenarios, "lockout", lambda: floods.run_lockout(live, args.lockout, args.probes), "floods")
    print("a pipelined /v1/health flood", file=sys.stderr)
    attempt(scenarios, "health_flood", lambda: floods.run_health_flood(live), "floods")
    attempt(scenarios, "big_head", lambda: floods.run_big_head(live), "floods")


def run_overlong(live, engine: str, scenarios: dict):
    """The over-long texts from the low-stake caller while the generation caller is timed; that caller."""
    caller = live.as_caller("generation")
    attempt(scenarios, f"overlong_{engine}", lambda: generation.run_overlong(caller, live.callers["low"]), "generation")
    return caller


def run_kokoro(workdir: str, scenarios: dict) -> None:
    """Over-long text and a generation past its timeout on a Kokoro miner (--miner.timeout.tts 8)."""
    print("over-long text and a generation past its timeout (Kokoro)", file=sys.stderr)
    extra = ("--services", "tts", "--tts.model", "kokoro:", "--miner.timeout.tts", f"{KOKORO_TIMEOUT_S:g}")
    try:
        kokoro = start_live_miner(workdir, extra, callers=("generation", "low"), stakes={"low": LOW_STAKE})
    except Exception as error:  # reported like a scenario that raised; the others still run
        for key in ("overlong_kokoro", "abandon"):
            scenarios.setdefault("generation", {})[key] = {"error": f"the Kokoro miner did not start: {error}"[:500]}
        return
    try:
        # First, while no speed is measured: a long text the measured speed would refuse before it starts.
        caller = kokoro.as_caller("generation")
        attempt(scenarios, "abandon", lambda: generation.run_abandon(caller, KOKORO_TIMEOUT_S), "generation")
        run_overlong(kokoro, "kokoro", scenarios)
    finally:
        kokoro.net.stop()


def run_kokoro_limit(workdir: str) -> dict:
    """Hole 5 on a Kokoro miner with the service's own timeout."""
    live = holes.start(workdir, ("--services", "tts", "--tts.model", "kokoro:"))
    try:
        return findings.run_at_the_limit(live, live.callers["low"], holes.miner_wallet(live))
    finally:
        live.net.stop()


def errors(scenarios: dict) -> tuple[dict, list[str]]:
    """Scenarios that raised, apart; what remains has every field its threshold reads."""
    found, kept = [], {}
    for key, value in scenarios.items():
        if key in GROUPS:
            broken = {k: v for k, v in value.items() if "error" in v}
            found += [f"{k}: {v['error']}" for k, v in broken.items()]
            kept[key] = {k: v for k, v in value.items() if k not in broken}
        elif "error" in value:
            found.append(f"{key}: {value['error']}")
        else:
            kept[key] = value
    return kept, found


def failures(scenarios: dict, args) -> list[str]:
    scenarios, found = errors(scenarios)
    if "hostile" in scenarios:
        found += thresholds.hostile(scenarios["hostile"], args.hostile)
    for key, check in (
        ("concurrent", thresholds.concurrent),
        ("idle", thresholds.idle),
        ("round", thresholds.round_),
        ("holes", thresholds.holes),
        ("kokoro_limit", thresholds.kokoro_limit),
        ("memory", thresholds.memory),
        ("soak", thresholds.soak),
        ("answers", thresholds.answers),
    ):
        if key in scenarios:
            found += check(scenarios[key])
    for key, check in (
        ("floods", thresholds.floods),
        ("generation", thresholds.generation),
        ("crash", thresholds.crash),
    ):
        if key in scenarios:
            found += check(scenarios[key])
    return found


def kept(args, slug: str, scenarios: dict, command: str) -> tuple[dict, str]:
    """With --keep: the scenarios of the results file already there that this run did not measure, beside this
    run's, and both commands (the file's first)."""
    path = os.path.join(args.out, slug, "reliability.json")
    if not args.keep or not os.path.exists(path):
        return scenarios, command
    with open(path) as handle:
        before = json.load(handle)
    earlier = before["command"].removesuffix(f"; then {command}")  # a rerun of the same command is named once
    return {**before["scenarios"], **scenarios}, f"{earlier}; then {command}"


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    slug = device_slug("cpu")
    with tempfile.TemporaryDirectory(prefix="audionet-reliability-") as workdir:
        scenarios = run_scenarios(args, workdir)
    command = command_line("python -m tests.stress", argv if argv is not None else sys.argv[1:])
    scenarios, command = kept(args, slug, scenarios, command)
    result = {
        "device": slug,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "scenarios": scenarios,
        "failures": failures(scenarios, args),
    }
    write_result(args.out, slug, "reliability", result, report.render(result), command)
    print("all thresholds met" if not result["failures"] else "FAILED:")
    for failure in result["failures"]:
        print(f"  {failure}")
    return 1 if result["failures"] else 0
