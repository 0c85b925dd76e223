"""Evaluator-devices study: the validator's evaluators replicated on every device of --eval.devices, judging the
same pre-made answers of a round (N clips per service, valid and distinct: the validator-scale study's spliced
answers) with each device alone, all devices with an equal split (round-robin), and all devices with the
validator's earliest-finish dispatch (lib/scoring/replicas.py). Measured side by side in one run: the same
answers, the same loaded evaluators, each configuration with fresh speed estimates.

    audionet-bench evaluator-devices --eval.devices cpu,cpu --simulate.slowdown 1,3 --clips 16,64

Writes <out>/<device-slug>/evaluator-devices.{json,md,png} (`--name` for another stem).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence

import numpy as np

from audionet.benchmarks.common import devices, simulated
from audionet.benchmarks.common.flags import add_service_flags, one_line_errors, study_parser
from audionet.benchmarks.common.results import command_line
from audionet.benchmarks.evaluator_devices import report
from audionet.lib.core.config import CommaList, Parser, positive_int
from audionet.lib.core.devices import device_slug
from audionet.lib.core.dispatch import ROUND_ROBIN, WEIGHTED
from audionet.lib.core.errors import ConfigError
from audionet.lib.scoring.jobs import Job
from audionet.lib.scoring.judge import Judge
from audionet.lib.scoring.replicas import EvaluatorReplicas
from audionet.lib.services import registry

WARMUP_CLIPS = 4  # per service: the clips the weighted dispatch measures each device's speed on before it is timed


def build_parser(prog: str) -> Parser:
    from audionet.models.eval.profiles import add_eval_flags

    parser = study_parser(prog, __doc__)
    sizes = CommaList(convert=positive_int, what="clip count")
    parser.add_argument("--clips", type=sizes, default="16,64", help="answers per service in a round, per step")
    parser.add_argument("--rounds", type=positive_int, default=1, help="timed rounds per size and configuration")
    parser.add_argument("--name", default=report.NAME, help="stem of the result files")
    add_service_flags(parser)
    add_eval_flags(parser)
    devices.add_device_flags(parser)
    return parser


def premade_round(services: Sequence[str], clips: int, seed: int, workdir: str) -> dict[str, list[Job]]:
    """Per service, `clips` requests drawn as the validator draws them, each with a valid, distinct answer
    spliced from real speech or music (benchmarks/validator_scale/answers.py), seeded by its index (every
    configuration judges it through the same listening noise); VC references from a folder."""
    from audionet.benchmarks.validator_scale.answers import Bank, answer
    from audionet.benchmarks.validator_scale.subnet import write_references
    from audionet.lib.prompts.references import FileReferences

    bank, rng = Bank.make(seed), np.random.default_rng(seed)
    references = FileReferences(write_references(os.path.join(workdir, "references"), seed))
    out = {}
    for name in services:
        service = registry.get(name)
        sources = references if "reference" in service.inputs else None
        requests = [service.draw(rng, sources) for _ in range(clips)]
        out[name] = [
            service.job(request, answer(bank, request), f"clip {n}", seed=n) for n, request in enumerate(requests)
        ]
    return out


def load_members(args, chosen: Sequence[devices.MeasuredDevice]) -> list:
    """One evaluator set per device, each loaded on its own; a simulated device's set padded to its speed."""
    from audionet.models.eval.profiles import EvalSettings, load_evaluators

    specs = EvalSettings.from_flags(args).specs()
    members = []
    for target in chosen:
        evaluators = load_evaluators(specs, device=target.device)
        if target.slowdown is not None:
            evaluators = simulated.simulated_evaluators(evaluators, target.slowdown, args.simulate_floor)
        members.append(evaluators)
    return members


def configurations(labels: Sequence[str]) -> list[tuple[str, list[int], str]]:
    """(name, replica indices, policy): each device alone, then all with round-robin, then all weighted."""
    everyone = list(range(len(labels)))
    alone = [(f"{label} alone", [n], WEIGHTED) for n, label in enumerate(labels)]
    return alone + [("all, round-robin", everyone, ROUND_ROBIN), ("all, weighted", everyone, WEIGHTED)]


def judge_round(judge: Judge, jobs: dict[str, list[Job]]) -> tuple[float, dict[str, float], list[float]]:
    """Every service's jobs judged as one round (services in turn, as the validator's round scorer does): its
    seconds, seconds per service, and every verdict's score."""
    seconds, scores = {}, []
    for name, service_jobs in jobs.items():
        started = time.perf_counter()
        verdicts = judge.score(registry.get(name).judging, service_jobs, remember=False)
        seconds[name] = time.perf_counter() - started
        scores += [verdict.score for verdict in verdicts]
    return sum(seconds.values()), seconds, scores


def study(
    members: Sequence, labels: Sequence[str], jobs: dict[str, list[Job]], sizes: Sequence[int], rounds: int, tick
) -> list[dict]:
    """Every configuration at every round size, `rounds` times; the weighted one after an untimed warm-up round of
    WARMUP_CLIPS per service (a validator's speeds are measured by its earlier rounds)."""
    rows = []
    for name, chosen, policy in configurations(labels):
        replicas = EvaluatorReplicas([members[n] for n in chosen], [labels[n] for n in chosen], policy)
        judge = Judge(replicas)
        if policy == WEIGHTED and len(chosen) > 1:
            judge_round(judge, {s: j[:WARMUP_CLIPS] for s, j in jobs.items()})
            replicas.take_report()
        for size in sizes:
            runs = [judge_round(judge, {s: j[:size] for s, j in jobs.items()}) for _ in range(rounds)]
            for _ in runs:
                tick()
            served = replicas.take_report()
            rows.append(
                {
                    "configuration": name,
                    "devices": [labels[n] for n in chosen],
                    "policy": policy,
                    "clips": size,
                    "makespans_s": [run[0] for run in runs],
                    "makespan_s": float(np.mean([run[0] for run in runs])),
                    "by_service_s": {s: float(np.mean([run[1][s] for run in runs])) for s in jobs},
                    "served": {row["label"]: row["clips"] for row in served},
                    "s_per_audio_s": {row["label"]: row["s_per_audio_s"] for row in served},
                    "scores": runs[-1][2],
                }
            )
        replicas.close()
    return rows


def findings(rows: list[dict], labels: Sequence[str]) -> list[dict]:
    """Per round size: weighted against round-robin and against the fastest device alone; whether every
    configuration gave every clip the same score."""
    out = []
    for size in sorted({row["clips"] for row in rows}):
        at = {row["configuration"]: row for row in rows if row["clips"] == size}
        alone = {label: at[f"{label} alone"]["makespan_s"] for label in labels}
        best = min(alone, key=alone.get)
        weighted, robin = at["all, weighted"], at["all, round-robin"]
        reference = at[f"{best} alone"]["scores"]
        differs = max(abs(a - b) for row in at.values() for a, b in zip(row["scores"], reference))
        out.append(
            {
                "clips": size,
                "weighted_s": weighted["makespan_s"],
                "round_robin_s": robin["makespan_s"],
                "best_alone": best,
                "best_alone_s": alone[best],
                "weighted_vs_round_robin": weighted["makespan_s"] / robin["makespan_s"],
                "weighted_vs_best_alone": weighted["makespan_s"] / alone[best],
                "weighted_served": weighted["served"],
                "largest_score_difference": differs,
            }
        )
    return out


def measure(args, chosen: Sequence[devices.MeasuredDevice], command: str, tick: Callable[[], None]) -> str:
    from audionet.models.eval.profiles import EvalSettings

    started_load = os.getloadavg()[0]
    labels = [target.label for target in chosen]
    members = load_members(args, chosen)
    with tempfile.TemporaryDirectory(prefix="audionet-evaluator-devices-") as workdir:
        jobs = premade_round(args.services, max(args.clips), args.seed, workdir)
    rows = study(members, labels, jobs, list(args.clips), args.rounds, tick)
    found = findings(rows, labels)
    for row in rows:
        del row["scores"]  # compared in the findings; not worth keeping per clip
    simulated_ = all(target.slowdown is not None for target in chosen)
    summary = {
        "labels": labels,
        "devices": [target.info() for target in chosen],
        "simulated": simulated_,
        "note": simulated.NOTE if simulated_ else None,
        "floor_s_per_audio_s": args.simulate_floor if simulated_ else None,
        "profile": EvalSettings.from_flags(args).chosen_profile(),
        "evaluators": members[0].describe(),
        "services": list(args.services),
        "audio_s": {
            str(n): {name: sum(j.audio.seconds for j in js[:n]) for name, js in jobs.items()} for n in args.clips
        },
        "clips": list(args.clips),
        "rounds": args.rounds,
        "warmup_clips": WARMUP_CLIPS,
        "rows": rows,
        "findings": found,
        "load_average": [started_load, os.getloadavg()[0]],
        "cpu_cores": os.cpu_count(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    slug = device_slug("cpu") if simulated_ else chosen[0].info()["slug"]
    return report.write(summary, args.out, slug, args.name, command)


def main(argv: list[str], prog: str = "audionet-bench evaluator-devices") -> int:
    args = build_parser(prog).parse_args(argv)

    def run() -> int:
        from rich.progress import Progress

        chosen = devices.targets(args, "eval.devices")
        if len(chosen) < 2:
            raise ConfigError("the evaluator-devices study needs two or more --eval.devices (or simulated ones)")
        with Progress() as progress:
            task = progress.add_task("rounds", total=(len(chosen) + 2) * len(args.clips) * args.rounds)
            measure(args, chosen, command_line(prog, argv), lambda: progress.advance(task))
        return 0

    return one_line_errors(prog, run)
