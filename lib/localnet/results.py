"""What a local subnet found: the validator's round log, a report (scores, weights, emission, latency per miner)
and its table. `LocalNet` has these as methods."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import defaultdict
from collections.abc import Callable
from statistics import fmean
from typing import Optional

from audionet.lib.core.chain import OfflineChain

NETUID = 1


class Results:
    """Read from the net's validator state folder (`state_dir`), its miners (`miners`), chain (`chain`) and
    validator (`validator_uid`, `validator_hotkey`, and `layout()`: the subnet's rules in words)."""

    state_dir: str
    miners: list
    chain: OfflineChain
    validator_uid: Optional[int]
    validator_hotkey: Optional[str]
    layout: Callable[[], str]

    def round_line(self, record: dict, rounds: int) -> str:
        """One round for a log: each miner's score per service, 0 with the first gate's name when gated."""
        names = {m.uid: m.name for m in self.miners}
        by_uid: dict[int, list[str]] = defaultdict(list)
        for result in record["results"]:
            score = "gated" if result["gate"] else f"{result['score']:.2f}"
            by_uid[result["uid"]].append(f"{result['service']} {score}")
        miners = "; ".join(f"{names.get(uid, uid)}: {', '.join(parts)}" for uid, parts in sorted(by_uid.items()))
        return f"round {record['round']}/{rounds}: {miners}"

    def round_records(self) -> list[dict]:
        path = os.path.join(self.state_dir, "rounds.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def report(self) -> dict:
        """Scores and per-service weights from the validator, shares of emission from the chain, latency from
        the round log."""
        with open(os.path.join(self.state_dir, "summary.json")) as handle:
            summary = json.load(handle)
        emission = self.chain.emission()
        mechanisms = asyncio.run(self.chain.mechanisms())
        latencies: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for record in self.round_records():
            for result in record["results"]:
                latencies[result["uid"]][result["service"]].append(result["latency_s"])
        by_uid = {m["uid"]: m for m in summary["miners"]}
        miners = []
        for miner in self.miners:
            entry = by_uid.get(miner.uid, {"scores": {}, "weights": {}})
            service_latency = {s: fmean(v) for s, v in latencies[miner.uid].items()}
            all_latency = [x for v in latencies[miner.uid].values() for x in v]
            miners.append(
                {
                    "uid": miner.uid,
                    "name": miner.name,
                    "backend": miner.label,
                    "hotkey": miner.hotkey,
                    "endpoint": f"127.0.0.1:{miner.port}",
                    "models": miner.models,
                    "scores": entry["scores"],
                    "weights": entry["weights"],
                    "bounds": entry.get("bounds", {}),
                    "eligible": entry.get("eligible", {}),
                    "emission": emission.get(miner.uid, 0.0),
                    "latency_s": service_latency,
                    "mean_latency_s": fmean(all_latency) if all_latency else None,
                }
            )
        return {
            "netuid": NETUID,
            "rounds": summary["round"],
            "block": summary["block"],
            "mechanisms": {"count": mechanisms.count, "shares": mechanisms.shares},
            "subnet": self.layout(),
            "validator": {"uid": self.validator_uid, "hotkey": self.validator_hotkey},
            "curve": summary.get("curve"),
            "miners": miners,
        }

    @staticmethod
    def print_table(report: dict) -> None:
        from rich.console import Console
        from rich.table import Table

        shares = ", ".join(f"{share:.2f}" for share in report["mechanisms"]["shares"])
        title = (
            f"audionet localnet: {report['rounds']} round(s), block {report['block']}; "
            f"{report['mechanisms']['count']} mechanism(s), emission split {shares}"
        )
        table = Table(title=title, caption=f"offline subnet: {report['subnet']}")
        services = list(dict.fromkeys(s for m in report["miners"] for s in m["scores"]))
        columns = ("uid", "backend", "hotkey", *(f"{s} score / weight" for s in services), "share of emission")
        for column in (*columns, "mean latency s"):
            table.add_column(column, justify="left" if column in ("backend", "hotkey") else "right")
        for m in report["miners"]:
            cells = [f"{m['scores'].get(s, 0.0):.3f} / {m['weights'].get(s, 0.0):.3f}" for s in services]
            latency = f"{m['mean_latency_s']:.2f}" if m["mean_latency_s"] is not None else "-"
            row = [str(m["uid"]), m["backend"], m["hotkey"][:12] + "…", *cells, f"{m['emission']:.3f}", latency]
            table.add_row(*row)
        Console(width=None if sys.stdout.isatty() else 200).print(table)  # a log keeps whole hotkeys
