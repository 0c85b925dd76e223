"""Validator rounds: sync -> sample miners -> ask each for the services its signed health says it serves, all
at once -> gate and reward -> records -> save state -> set weights once per epoch, one mechanism per service
(or the services that share a mechanism combined by a split)."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Optional

import httpx
import numpy as np

from audionet.lib.core.audio import encode_flac
from audionet.lib.core.chain import Chain
from audionet.lib.core.memory import trim_heap
from audionet.lib.core.timing import Timer
from audionet.lib.scoring.judge import Judge
from audionet.lib.scoring.replicas import report_line
from audionet.lib.services import registry
from audionet.lib.validator.client import Answer, MinerClient, Target, connection_limits
from audionet.lib.validator.coverage import Coverage
from audionet.lib.validator.draws import DrawLanes
from audionet.lib.validator.network_view import NetworkView
from audionet.lib.validator.round import RoundScorer, Scored, score_as_answered
from audionet.lib.validator.settings import ValidatorSettings
from audionet.lib.validator.state import ScoreState, atomic_write_json
from audionet.lib.validator.verdicts import verdict_rows
from audionet.lib.validator.weight_setting import WeightSetter

log = logging.getLogger("validator")
SERVED_TTL_S = 600.0  # how long a miner's signed health (the services it serves) is trusted before asking again
HTTP_POOLS = 16  # httpx clients the miners are shared between (64 connections each)


class Validator:
    def __init__(
        self,
        wallet,
        chain: Chain,
        settings: ValidatorSettings,
        sources: Optional[dict] = None,
        judge: Optional[Judge] = None,
        timer: Optional[Timer] = None,
    ):
        """`sources`: service name -> what its `draw` needs (`Service.open_sources`: e.g. reference voices)."""
        self.wallet, self.chain, self.settings = wallet, chain, settings
        self.timer = timer or Timer("validator")
        self.network = NetworkView()  # every miner's signed generation time, by the GPU it reports
        self.hotkey = wallet.hotkey.ss58_address
        self.services = {name: registry.get(name) for name in settings.services}
        self.sources = dict(sources or {})
        self.judge = judge or Judge.load()
        self.rng = np.random.default_rng(settings.seed)
        self.state_path = os.path.join(settings.state_dir, "state.json")
        self.summary_path = os.path.join(settings.state_dir, "summary.json")
        self.rounds_path = os.path.join(settings.state_dir, "rounds.jsonl")
        self.history_path = os.path.join(settings.state_dir, "duplicates.npz")
        self.state = ScoreState.load(self.state_path, tuple(self.services), settings.curve)
        # every miner before any again, as many as a round interval allows; the pass goes on after a restart
        self.coverage = Coverage.from_json(self.state.coverage, self.rng)
        self.health: dict[str, tuple[float, Optional[frozenset[str]]]] = {}  # hotkey -> (asked at, it serves)
        self.weights = WeightSetter(chain, settings, self.state, self.state_path)
        self.on_verdicts: Optional[Callable[[list[dict], list[Scored]], None]] = None  # verdicts.VerdictLog
        self.judge.duplicates.load(self.history_path)  # answers of earlier rounds, before a restart too
        if self.state.round:
            log.info("restored state: round %d, %d uids", self.state.round, len(self.state.hotkeys))

    def make_request(self, name: str, rng: Optional[np.random.Generator] = None):
        return self.services[name].draw(self.rng if rng is None else rng, self.sources.get(name))

    async def ask(self, client: MinerClient, lanes: DrawLanes, target: Target, name: str) -> Answer:
        """Draw `target`'s request of `name` (off the event loop, in its service's lane), then query it."""
        request = await lanes.draw(name)
        return await client.query(target, self.services[name], request, self.settings.timeouts[name])

    def sample_targets(self, metagraph) -> list[Target]:
        neurons = [n for n in metagraph.neurons if n.axon and n.hotkey != self.hotkey]
        targets = {n.uid: Target(n.uid, n.hotkey, n.axon) for n in neurons}
        budget = self.settings.round_budget_s or self.settings.round_interval
        count = self.coverage.count(len(targets), budget, self.settings.sample_size)
        return [targets[uid] for uid in sorted(self.coverage.take(list(targets), count, self.state.doubted()))]

    async def served(self, client: MinerClient, targets: list[Target]) -> dict[int, set[str]]:
        """Per target: the scored services it serves, from its signed health (asked again after SERVED_TTL_S;
        a miner that does not answer it is asked for every service, and its failures are scored)."""
        now = time.monotonic()
        stale = [t for t in targets if now - self.health.get(t.hotkey, (-np.inf, None))[0] > SERVED_TTL_S]
        answers = await asyncio.gather(*(client.served(t, wanted=self.services) for t in stale))
        for target, services in zip(stale, answers):
            self.health[target.hotkey] = (now, services)
        out = {}
        for target in targets:
            services = self.health[target.hotkey][1]
            out[target.uid] = set(self.settings.services) if services is None else services & set(self.services)
            if services is not None:
                self.state.set_served(target.uid, services)
        return out

    async def run_round(self, client: MinerClient) -> list[Scored]:
        metagraph = await self.chain.metagraph()
        for uid in self.state.sync(metagraph.hotkeys):
            log.info("uid %d changed hotkey: its records start again from nothing", uid)
            self.coverage.last_scored.pop(uid, None)  # a new miner: never scored by this validator
        registered = set(metagraph.hotkeys)  # health of hotkeys that left: registration churn would grow it for good
        self.health = {hotkey: seen for hotkey, seen in self.health.items() if hotkey in registered}
        self.state.advance(time.time())
        targets = self.sample_targets(metagraph)
        served = await self.served(client, targets)
        # Each miner gets its own prompt and seed: deterministic models cannot
        # collide as "duplicates", and a cached or copied answer cannot match.
        lanes = DrawLanes(self.rng, {s: functools.partial(self.make_request, s) for s in self.settings.services})
        jobs = [(t, s) for t in targets for s in self.settings.services if s in served[t.uid]]
        queries = [self.ask(client, lanes, t, s) for t, s in jobs]
        # Each answer is judged as it arrives (off the event loop): the slowest miner holds only its own answer.
        scorer = RoundScorer(self.judge, self.services, self.timer.measure)
        scored, network_s, judging_s = await score_as_answered(queries, scorer)
        self.timer.record("all", "network", network_s)  # from the first query out to the last answer in
        self.timer.record("all", "evaluation", judging_s, sum(s.answer.audio.seconds for s in scored if s.answer.ok))
        self._time_round_trips([s.answer for s in scored])
        coverage = self.coverage.scored([t.uid for t in targets], time.time(), judging_s)
        with self.timer.measure("all", "state"):
            estimates = []
            for item in scored:
                uid, service, meta = item.answer.target.uid, item.answer.service, item.answer.meta
                model = meta.model if item.answer.ok and meta is not None else None  # signed: a new one, a new record
                estimates.append(self.state.update(service, uid, item.reward, not item.answer.ok, model))
                if item.gate is None and meta is not None:  # a gated answer's speed is no GPU's speed
                    self.network.record(meta.device, service, meta.generation_s, item.answer.audio.seconds, uid)
            self.state.round += 1
            block = metagraph.block
            self.state.coverage = self.coverage.as_json()
            self.state.save(self.state_path)
            self.judge.duplicates.save(self.history_path)
        with self.timer.measure("all", "logging"):
            self._log_round(block, scored, estimates, coverage)
            if self.settings.save_audio_dir:
                self._save_audio(scored)
        await self.weights.set(block)
        with self.timer.measure("all", "logging"):
            self.write_summary(block)
        return scored

    def _time_round_trips(self, answers: list[Answer]) -> None:
        """Round trip as the validator saw it, per service and per miner (failed queries apart)."""
        for answer in answers:
            self.timer.record(answer.service, "decode", answer.decode_s)
            stage = "roundtrip" if answer.ok else "roundtrip/failed"
            audio_s = answer.audio.seconds if answer.ok else None
            self.timer.record(answer.service, stage, answer.latency_s, audio_s)
            self.timer.record(answer.service, f"{stage}/uid{answer.target.uid}", answer.latency_s, audio_s)

    def _log_round(self, block: int, scored: list[Scored], estimates: list[float], coverage: dict) -> None:
        record = {
            "round": self.state.round,
            "block": block,
            "time": time.time(),
            "coverage": coverage,
            "memory_s": {"record": self.settings.curve.memory.record_s},
            "results": verdict_rows(
                self.state.round, scored, estimates, self.settings.timeouts, self.state.weights(), self.weights.plan
            ),
        }
        if len(self.judge.replicas) > 1:  # per evaluation device: clips judged this round, measured speed
            record["evaluators"] = self.judge.replicas.take_report()
            log.info("round %d evaluators: %s", self.state.round, report_line(record["evaluators"]))
        with open(self.rounds_path, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        if self.on_verdicts is not None:
            self.on_verdicts(record["results"], scored)
        for s in scored:
            status = f"reward {s.reward:.3f}" if s.gate is None else f"0 ({s.gate})"
            log.info("round %d uid %d %s: %s", self.state.round, s.answer.target.uid, s.answer.service, status)
        since = coverage["since_last_s"]
        log.info(
            "round %d covered %d of %d miners (pass %d; %d first time; longest since last scored: %s s)",
            self.state.round,
            coverage["miners"],
            coverage["of"],
            coverage["pass"],
            since["first_time"],
            "-" if since["max"] is None else f"{since['max']:.0f}",
        )

    def _save_audio(self, scored: list[Scored]) -> None:
        """round-<n>/uid-<uid>-<service>.flac: names from our own counters, never from the wire."""
        folder = os.path.join(self.settings.save_audio_dir, f"round-{self.state.round:05d}")
        os.makedirs(folder, exist_ok=True)
        for item in scored:
            if item.answer.audio is not None:
                name = f"uid-{item.answer.target.uid:03d}-{item.answer.service}.flac"
                with open(os.path.join(folder, name), "wb") as handle:
                    handle.write(encode_flac(item.answer.audio))

    def write_summary(self, block: int) -> None:
        weights, estimates, answers = self.state.weights(), self.state.estimates(), self.state.answers()
        curve = self.state.curve_view()
        miners = [
            {
                "uid": uid,
                "hotkey": hotkey,
                "serves": sorted(self.state.served(uid)),
                "scores": {s: estimates[s][uid] for s in self.services},
                "weights": {s: weights[s][uid] for s in self.services},
                "answers": {s: answers[s][uid] for s in self.services},
                "bounds": {s: curve[s]["bounds"][uid] for s in self.services},
                "eligible": {s: curve[s]["eligible"][uid] for s in self.services},
            }
            for uid, hotkey in enumerate(self.state.hotkeys)
            if hotkey != self.hotkey
        ]
        atomic_write_json(
            self.summary_path,
            {
                "round": self.state.round,
                "block": block,
                "validator": self.hotkey,
                "last_weights_block": self.state.last_weights_block,
                "curve": {
                    "floor": self.state.curve.floor,
                    "power": self.state.curve.power,
                    "references": {s: curve[s]["reference"] for s in self.services},
                },
                "miners": miners,
            },
        )

    @asynccontextmanager
    async def miner_client(self) -> AsyncIterator[MinerClient]:
        """The signed HTTP client the validator asks miners with: HTTP_POOLS pools, each for its share of the
        miners (one pool for a whole subnet's queries spends its time in its own bookkeeping)."""
        limits = connection_limits(max_connections=64, max_keepalive_connections=32)
        async with AsyncExitStack() as stack:
            pools = [await stack.enter_async_context(httpx.AsyncClient(limits=limits)) for _ in range(HTTP_POOLS)]
            yield MinerClient(self.wallet, pools)

    async def run(self, rounds: int = 0) -> None:
        """Run `rounds` rounds (0 = forever), `round_interval` seconds apart."""
        async with self.miner_client() as client:
            done = 0
            while rounds == 0 or done < rounds:
                started = time.monotonic()
                try:
                    await self.run_round(client)
                except Exception:
                    log.exception("round failed; trying again next interval")
                trim_heap()  # the round's answers are gone: their memory goes back (lib/core/memory.py)
                done += 1
                if rounds == 0 or done < rounds:
                    await asyncio.sleep(max(0.0, self.settings.round_interval - (time.monotonic() - started)))
