"""The evaluators on several devices (`--eval.devices`): one full set of evaluators per device (a replica), and a
service's clips split over them by earliest expected finish, the planner the miner's pool uses (lib/core/dispatch.py).

    replicas = EvaluatorReplicas([load_evaluators(specs, device=d) for d in ("cuda:0", "cuda:1")])
    replicas.run("tts", clips, analyses, timed)    # every analysis on every clip, each clip on one device

Each replica runs every declared analysis on its own share, in its own thread, and writes only its own clips'
measures. The replicas load the same models from the same specs, so a clip's verdict does not depend on which
one judged it. Each replica's seconds of evaluation per audio second are measured per service from its own shares
(wall time of the share over its audio): a slower device gets a smaller share once it has been measured, and
before that an equal one. One replica is called directly, with no thread: a single device judges as it always did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Optional

from audionet.lib.core.devices import bind_cuda, device_labels
from audionet.lib.core.dispatch import ROUND_ROBIN, WEIGHTED, Slots, Speed, check_policy, estimate, plan
from audionet.lib.scoring.analyses import StageTimer
from audionet.lib.scoring.jobs import Clip

Analysis = Callable[[Any, Sequence[Clip], StageTimer], None]


def device_of(evaluators) -> str:
    return getattr(evaluators, "device", None) or "cpu"


class EvaluatorReplicas:
    """Loaded evaluators per device (`models.eval.profiles.Evaluators`, or anything with their attributes); the
    first also runs the gates' VAD. `judged`: clips each replica judged since the last `take_report`."""

    def __init__(self, members: Sequence[Any], labels: Optional[Sequence[str]] = None, policy: str = WEIGHTED):
        """`policy`: WEIGHTED (earliest finish, the validator's), or ROUND_ROBIN (clip i on replica i mod n: the
        equal split the evaluator-devices study compares it with)."""
        if not members:
            raise ValueError("evaluator replicas need at least one set of evaluators")
        self.members, self.policy = list(members), check_policy(policy)
        self.labels = list(labels) if labels else device_labels([device_of(m) for m in self.members])
        if len(self.labels) != len(self.members):
            raise ValueError(f"{len(self.labels)} labels for {len(self.members)} evaluator replicas")
        self.speeds: dict[str, list[Speed]] = {}  # per service: each replica's seconds per audio second
        self.judged = [0] * len(self.members)
        # one thread per replica, bound to its device; none for one replica (judged in the caller's thread)
        self._threads = (
            [
                ThreadPoolExecutor(1, f"evaluators-{label}", initializer=bind_cuda, initargs=(device_of(member),))
                for member, label in zip(self.members, self.labels)
            ]
            if len(self.members) > 1
            else None
        )

    @property
    def first(self) -> Any:
        return self.members[0]

    def __len__(self) -> int:
        return len(self.members)

    def split(self, service: str, clips: Sequence[Clip]) -> list[list[Clip]]:
        """Each replica's share of `clips`: earliest expected finish at each replica's measured speed for `service`,
        longest clips planned first (the whole batch is known, and longest-first packs it tightest)."""
        speeds = self.speeds.setdefault(service, [Speed() for _ in self.members])
        if len(self.members) == 1:
            return [list(clips)]
        if self.policy == ROUND_ROBIN:
            return [list(clips[n :: len(self.members)]) for n in range(len(self.members))]
        slots = [Slots((0.0,), estimate(speed, speeds)) for speed in speeds]
        order = sorted(range(len(clips)), key=lambda n: -clips[n].audio.seconds)
        where = plan(slots, [clips[n].audio.seconds for n in order])
        shares: list[list[Clip]] = [[] for _ in self.members]
        for n, (replica, _start) in sorted(zip(order, where)):  # each share keeps the clips' order
            shares[replica].append(clips[n])
        return shares

    def run(self, service: str, clips: Sequence[Clip], analyses: Sequence[Analysis], timed: StageTimer) -> None:
        """Every analysis on every clip, each clip's on one replica; each replica's speed updated from its share."""
        shares = self.split(service, clips)  # the service's speeds exist from here on
        if self._threads is None:
            self._judge(0, shares[0], analyses, timed)
            return
        running = {
            n: self._threads[n].submit(self._judge, n, share, analyses, timed)
            for n, share in enumerate(shares)
            if share
        }
        wait(running.values())  # every share ends before a failure is raised: no thread writes measures after
        for n, future in running.items():
            self.speeds[service][n].add(future.result(), sum(clip.audio.seconds for clip in shares[n]))

    def _judge(self, replica: int, share: Sequence[Clip], analyses: Sequence[Analysis], timed: StageTimer) -> float:
        started = time.perf_counter()
        for analysis in analyses:
            analysis(self.members[replica], share, timed)
        self.judged[replica] += len(share)
        return time.perf_counter() - started

    def take_report(self) -> list[dict]:
        """Per replica: its label, the clips it judged since the last report, and its measured seconds of
        evaluation per audio second by service (None where not yet measured); the counts start again."""
        report = [
            {
                "label": label,
                "clips": self.judged[n],
                "s_per_audio_s": {
                    service: None if speeds[n].value is None else round(speeds[n].value, 4)
                    for service, speeds in self.speeds.items()
                },
            }
            for n, label in enumerate(self.labels)
        ]
        self.judged = [0] * len(self.members)
        return report

    def close(self) -> None:
        for threads in self._threads or ():
            threads.shutdown(wait=False, cancel_futures=True)


def report_line(report: Sequence[dict]) -> str:
    """`cuda0 120 clips (tts 0.021, vc 0.034 s per audio s); cuda1 ...`: the validator's log line."""

    def speeds(row: dict) -> str:
        known = [f"{service} {value:.3g}" for service, value in row["s_per_audio_s"].items() if value is not None]
        return f" ({', '.join(known)} s per audio s)" if known else ""

    return "; ".join(
        f"{row['label']} {row['clips']} clip{'' if row['clips'] == 1 else 's'}{speeds(row)}" for row in report
    )
