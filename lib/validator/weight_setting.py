"""Setting weights on chain, once an epoch per mechanism: one mechanism per service when the subnet runs enough
(or the services that share one combined by the split), each published only once this validator's evidence
supports it (the curve's `ready_error`). Until then it holds the weights it last set there, and sets them again
(read back from the chain) an epoch after they were set, so its stake keeps counting in consensus: subtensor's
activity cutoff (5000 blocks) is far longer than an epoch, and a refused or failed setting is tried again next
round, well within it. Under commit-reveal it sets nothing over newer weights it committed that are not revealed
yet."""

from __future__ import annotations

import logging
from typing import Optional

import numpy as np

from audionet.lib.core.chain import Chain, OwnWeights
from audionet.lib.core.errors import ConfigError
from audionet.lib.services import registry
from audionet.lib.validator.mechanisms import Plan, plan
from audionet.lib.validator.settings import ValidatorSettings
from audionet.lib.validator.state import ScoreState

log = logging.getLogger("validator")


class WeightSetter:
    """The validator's weight setting: `set(block)` after each round."""

    def __init__(self, chain: Chain, settings: ValidatorSettings, state: ScoreState, state_path: str):
        self.chain, self.settings, self.state, self.state_path = chain, settings, state, state_path
        self.plan: Optional[Plan] = None  # the mechanisms as weights were last set
        self.held_said: dict[int, int] = {}  # mechid -> the block this validator last said it holds its weights there
        # mechid -> the block it last found nothing of its own to set again there: no weights on chain, or newer
        # ones it committed that commit-reveal has not revealed yet (set again, the older would replace them)
        self.nothing_held: dict[int, int] = {}

    def due(self, mechid: int, block: int) -> bool:
        """Whether `epoch_length` blocks have passed since weights were last set on this mechanism (or never)."""
        last = self.state.mechanism_blocks.get(mechid, self.state.last_weights_block)
        return last < 0 or block - last >= self.settings.epoch_length

    async def set(self, block: int) -> None:
        """Each mechanism due gets the weights of the services it pays (one per service when the subnet runs a
        mechanism per service; combined by the split where services share one), once this validator's evidence
        supports every one of them; until then it sets the weights it has on chain there again (`_held`)."""
        known = self.plan.used if self.plan else (sorted(self.state.mechanism_blocks) or [0])
        if not any(self.due(m, block) for m in known):
            return
        try:
            mechanisms = await self.chain.mechanisms()
            layout = plan(registry.names(), mechanisms.count, self.settings.mechanisms, self.settings.split)
            self.plan = layout
        except ConfigError as error:
            log.error("not setting weights: %s", error)
            return
        except Exception as error:
            log.error("cannot read the subnet's mechanisms (will retry next round): %s", error)
            return
        per_service = {s: np.asarray(w) for s, w in self.state.weights().items()}
        errors = self.state.typical_errors()
        done = []
        # which are due is decided before any is set: a mechanism never set falls back on the last block set
        for mechid in [m for m in layout.used if self.due(m, block)]:
            if not any(s in per_service for s in layout.services_of(mechid)):
                continue  # a mechanism for services this validator does not score: other validators set it
            waiting = layout.holding(mechid, {s: errors[s] <= self.settings.curve.ready_error for s in errors})
            if waiting:
                self._say_holding(mechid, block, waiting, errors)
                held = await self._held(mechid, block)
                if held is None:
                    continue
                uids, values = list(held.weights), list(held.weights.values())
                what = f"{len(uids)} uids held (its weights on chain, set again)"
            else:
                self.held_said.pop(mechid, None)
                self.nothing_held.pop(mechid, None)
                weights = layout.combine(per_service, mechid)
                uids = [int(u) for u in np.flatnonzero(weights > 0)]
                if not uids:
                    log.info(
                        "mechanism %d: no miner has earned weight in %s; not setting it",
                        mechid,
                        layout.services_of(mechid),
                    )
                    continue
                values, what = [float(weights[u]) for u in uids], f"{len(uids)} uids"
            try:
                await self.chain.set_weights(uids, values, mechid=mechid)
            except Exception as error:
                log.error("set_weights on mechanism %d failed (will retry next round): %s", mechid, error)
                continue
            self.state.mechanism_blocks[mechid] = self.state.last_weights_block = block
            done.append(f"mechanism {mechid} ({'+'.join(layout.services_of(mechid))}): {what}")
        if done:
            self.state.save(self.state_path)
            log.info("set weights at block %d: %s", block, "; ".join(done))

    def _say_holding(self, mechid: int, block: int, waiting: list[str], errors: dict[str, float]) -> None:
        said = self.held_said.get(mechid)
        if said is not None and block - said < self.settings.epoch_length:
            return  # said once an epoch
        self.held_said[mechid] = block
        log.info(
            "mechanism %d: holding its weights until the evidence supports them (%s; published at %.1f%%)",
            mechid,
            ", ".join(f"{s}: the typical miner's error is {errors[s]:.1%} of the reference" for s in waiting),
            100 * self.settings.curve.ready_error,
        )

    async def _held(self, mechid: int, block: int) -> Optional[OwnWeights]:
        """This validator's weights on chain for a mechanism it holds, when they are due to be set again (an
        epoch after they were last set there); None where it has none there (a fresh validator, a service it
        begins to score), they are recent, or it committed newer ones commit-reveal has not revealed yet: those
        cannot be read back (timelock-encrypted) and the older, set again, would be revealed after and replace
        them; the commit keeps its stake counting (LastUpdate moves at a commit), and once revealed they are
        held in turn."""
        looked = self.nothing_held.get(mechid)
        if looked is not None and block - looked < self.settings.epoch_length:
            return None  # nothing to set again an epoch ago: looked again once an epoch
        try:
            own = await self.chain.own_weights(mechid)
        except Exception as error:
            log.error("cannot read its weights on mechanism %d (will retry next round): %s", mechid, error)
            return None
        if own is None:
            self.nothing_held[mechid] = block
            return None
        if block - own.block < self.settings.epoch_length:
            self.state.mechanism_blocks[mechid] = own.block  # set recently (before a lost state): due an epoch after
            return None
        if own.pending:
            log.info(
                "mechanism %d: weights it committed at block %d are not revealed yet; not setting older ones over "
                "them (looked again in an epoch)",
                mechid,
                own.block,
            )
            self.nothing_held[mechid] = block
            return None
        return own
