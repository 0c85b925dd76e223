"""Evaluation cost per profile: seconds per clip of each evaluator, batched across a round.

For every profile, one round of `--clips` honest answers per service (the best offline backends)
is judged by the validator's own Judge (`benchmarks/evaluation.py`), `--runs` times after one
warm-up round; each evaluator call is a timed stage, divided by the round's clips. With
`--weights random` (the only choice here for `standard` and `large`: no hub) the profile's
models are their real architectures at full size with random weights: timing only, and
Whisper's random decoder writes to the 160-token cap, an upper bound on decoding time.

    python -m audionet.benchmarks.profile_cost --weights random [--profiles offline,standard,large]
        [--clips 8] [--runs 2] [--eval.device cpu] [--eval.asr whisper:large-v3 ...: on top of every profile]

Writes evaluation-profiles-<device-slug>.{md,json,png} (the goal on a GPU: <= 0.25 s per clip
for the standard profile).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np
from tqdm import tqdm

from audionet.benchmarks import RESULTS_DIR
from audionet.benchmarks.evaluation import Evaluation, evaluator_specs
from audionet.benchmarks.tables import table
from audionet.lib import services as registry
from audionet.lib.config import CommaList, Parser, positive_int
from audionet.lib.errors import BackendError, ConfigError, exit_code
from audionet.lib.gpu import cpu_model_name, describe_device
from audionet.lib.timing import Timer
from audionet.models.eval.registry import PROFILES, add_eval_flags, overrides_from_args, resolve_specs

GOAL_S_PER_CLIP = 0.25  # standard profile on a GPU, a whole round batched


def honest_round(service, sources, clips: int, seed: int) -> tuple[list, list]:
    """`clips` fresh requests drawn as the validator draws them, answered by the offline backend."""
    backend = service.load_backend(service.offline_backend, warmup=False)
    rng = np.random.default_rng(seed)
    requests = [service.draw(rng, sources) for _ in range(clips)]
    return requests, [service.generate(backend, request) for request in requests]


def time_profile(profile: str, specs: dict[str, str], rounds: dict, runs: int, device: str) -> list[dict]:
    """Rows of (service, stage, seconds per clip) for one profile; stage "total" is the whole Judge call."""
    evaluation = Evaluation(device=device, specs=specs)
    timer = Timer("profile-cost", device=describe_device(device).slug, window=10_000)
    rows = []
    for name, (requests, clips) in rounds.items():
        service = registry.get(name)
        evaluation.verdicts(service, requests, clips, Timer("warm-up").measure)
        for _ in range(runs):
            with timer.measure(name, "evaluation/total", sync=device):
                evaluation.verdicts(service, requests, clips, timer.measure)
        for key, stats in timer.snapshot().items():
            if key.service == name:
                stage = key.stage.removeprefix("evaluation/")
                rows.append(
                    {"profile": profile, "service": name, "stage": stage, "s_per_clip": stats.avg_s / len(clips)}
                )
    return rows


def markdown(result: dict) -> str:
    lines = [
        f"# Evaluation cost per profile on {result['device']} ({result['cpu']})",
        "",
        f"One round of {result['clips']} honest answers per service, judged {result['runs']} times after a "
        "warm-up round; seconds per clip = the evaluator's time for the whole round / clips (VC's speaker stage "
        "also embeds the references). "
        + ("Weights: **random** (timing only; Whisper decodes to its 160-token cap). " if result["random"] else "")
        + f"Goal on a GPU: <= {GOAL_S_PER_CLIP} s per clip for the standard profile.",
        "",
    ]
    for name in result["services"]:
        rows = [r for r in result["rows"] if r["service"] == name]
        stages = sorted({r["stage"] for r in rows} - {"total"}) + ["total"]
        cell = {(r["profile"], r["stage"]): r["s_per_clip"] for r in rows}
        lines += [
            f"## {registry.get(name).title}",
            "",
            table(
                ["evaluator (s/clip)", *result["profiles"]],
                [
                    [stage, *(f"{cell[p, stage]:.3f}" if (p, stage) in cell else "-" for p in result["profiles"])]
                    for stage in stages
                ],  # fmt: skip
            ),
        ]
    return "\n".join(lines)


def plot(result: dict, path: str) -> None:
    from audionet.benchmarks.plots import plt, save

    services, profiles = result["services"], result["profiles"]
    total = {(r["profile"], r["service"]): r["s_per_clip"] for r in result["rows"] if r["stage"] == "total"}
    x = np.arange(len(services))
    width = 0.8 / len(profiles)
    fig, ax = plt.subplots(figsize=(7, 4))
    for n, profile in enumerate(profiles):
        ax.bar(x + n * width, [total.get((profile, s), 0.0) for s in services], width, label=profile)
    ax.axhline(GOAL_S_PER_CLIP, color="grey", linestyle="--", label=f"GPU goal, standard ({GOAL_S_PER_CLIP} s)")
    ax.set_xticks(x + width * (len(profiles) - 1) / 2, [registry.get(s).title for s in services])
    ax.set_ylabel("evaluation seconds per clip (round batched)")
    ax.set_title(f"Evaluation cost per profile, {result['device']}" + (" (random weights)" if result["random"] else ""))
    ax.legend()
    save(fig, path)


def build_parser() -> Parser:
    parser = Parser(prog="python -m audionet.benchmarks.profile_cost", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--profiles", type=CommaList(allowed=tuple(PROFILES), what="profile"), default="offline,standard"
    )
    parser.add_argument("--services", type=registry.service_list, default=",".join(registry.names()))
    parser.add_argument("--weights", choices=["pretrained", "random"], default="pretrained")
    parser.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/audionet/random-weights"))
    parser.add_argument("--clips", type=positive_int, default=8, help="answers per service in the round")
    parser.add_argument("--runs", type=positive_int, default=2)
    add_eval_flags(parser, profile=False, device_default="cpu")  # --eval.<kind> overrides every profile
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=RESULTS_DIR, help="results folder (default: ./benchmarks/results)")
    for service in registry.all_services():
        service.add_flags(parser)  # references drawn as the validator draws them
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return study(args)
    except (ConfigError, BackendError) as error:
        print(f"profile_cost: {error}", file=sys.stderr)
        return exit_code(error)


def study(args) -> int:
    services, profiles = list(args.services), list(args.profiles)
    specs = {profile: resolve_specs(profile, overrides_from_args(args)) for profile in profiles}
    rounds = {}
    for name in tqdm(services, desc="honest answers"):
        service = registry.get(name)
        rounds[name] = honest_round(service, service.open_sources(args), args.clips, args.seed)
    rows = []
    for profile in tqdm(profiles, desc="profiles"):
        # offline: no stand-ins
        loaded = evaluator_specs(specs[profile], args.weights, args.cache_dir, args.eval_device)
        rows += time_profile(profile, loaded, rounds, args.runs, args.eval_device)
    info = describe_device(args.eval_device)
    result = {
        "device": info.slug,
        "cpu": cpu_model_name(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": list(os.getloadavg()),
        "clips": args.clips,
        "runs": args.runs,
        "random": args.weights == "random" and profiles != ["offline"],
        "profiles": profiles,
        "services": services,
        "specs": specs,  # each profile with the --eval.<kind> overrides on top
        "rows": rows,
    }
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"evaluation-profiles-{info.slug}")
    with open(stem + ".json", "w") as handle:
        json.dump(result, handle, indent=1)
    with open(stem + ".md", "w") as handle:
        handle.write(markdown(result))
    plot(result, stem + ".png")
    print(markdown(result))
    print(f"wrote {stem}.{{md,json,png}}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
