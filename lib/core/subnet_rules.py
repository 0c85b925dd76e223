"""What subtensor refuses, for the offline chain: a subnet's hyperparameters and the checks the real chain runs.

Read from opentensor/subtensor at commit 14bc6f9f (`pallets/subtensor/src/lib.rs` defaults,
`subnets/mechanism.rs` `do_set_mechanism_count` and `ensure_max_uids_over_all_mechanisms`,
`subnets/weights.rs` `check_rate_limit` and the timelocked commits, `admin-utils` `sudo_set_max_allowed_uids`):

- `MaxMechanismCount` (root, 2 by default, at most 16) caps the mechanisms a subnet runs, and
  `max_uids x mechanisms` may not exceed 256 (`TooManyUIDsPerMechanism`): a 256-uid subnet runs one mechanism;
- a validator sets weights on a mechanism at most once every `WeightsSetRateLimit` blocks (100), counted from
  its last setting there (`SettingWeightsTooFast`, `CommittingWeightsTooFast`);
- with commit-reveal (on by default, one tempo), weights committed during an epoch are revealed, and used, at
  the epoch `reveal_period` epochs later; until then nobody sees them;
- an epoch fires at the blocks where (block + netuid + 1) is a multiple of tempo + 1 (360 by default).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_UIDS = 256  # DefaultMaxAllowedUids: the most uids a subnet may have, and max_uids x mechanisms' cap
MAX_MECHANISMS = 16  # MAX_MECHANISM_COUNT_PER_SUBNET: the most root may allow


class RuleError(ValueError):
    """What the real chain would refuse, as one line naming subtensor's error."""


@dataclass(frozen=True)
class SubnetRules:
    """A subnet's hyperparameters as a new subnet gets them on subtensor (root may change tempo, the rate limit
    and MaxMechanismCount; the owner max_uids and commit-reveal)."""

    tempo: int = 360  # blocks between epochs
    weights_rate_limit: int = 100  # WeightsSetRateLimit: blocks between a validator's settings on a mechanism
    reveal_period: int = 1  # commit-reveal: epochs until committed weights are revealed (0: commit-reveal off)
    max_uids: int = DEFAULT_MAX_UIDS  # MaxAllowedUids
    max_mechanisms: int = 2  # MaxMechanismCount (global, root's)

    def check(self, mechanisms: int = 1, registered: int = 0) -> None:
        """Raise RuleError where subtensor would refuse these settings for a subnet with `mechanisms` and
        `registered` uids."""
        if self.tempo < 1 or self.weights_rate_limit < 0 or self.reveal_period < 0:
            raise RuleError(f"InvalidValue: tempo >= 1, rate limit and reveal period >= 0, not {self}")
        if not 1 <= self.max_mechanisms <= MAX_MECHANISMS:
            raise RuleError(f"InvalidValue: MaxMechanismCount is 1 to {MAX_MECHANISMS}, not {self.max_mechanisms}")
        if not 1 <= self.max_uids <= DEFAULT_MAX_UIDS:
            raise RuleError(
                f"MaxAllowedUidsGreaterThanDefaultMaxAllowedUids: max_uids is 1 to {DEFAULT_MAX_UIDS}, "
                f"not {self.max_uids}"
            )
        if registered > self.max_uids:
            raise RuleError(
                f"MaxAllowedUIdsLessThanCurrentUIds: {registered} uids are registered, max_uids {self.max_uids}"
            )
        if not 1 <= mechanisms <= self.max_mechanisms:
            raise RuleError(
                f"InvalidValue: MaxMechanismCount is {self.max_mechanisms}, so a subnet runs 1 to "
                f"{self.max_mechanisms} mechanisms, not {mechanisms} (root may raise it, up to {MAX_MECHANISMS})"
            )
        if self.max_uids * mechanisms > DEFAULT_MAX_UIDS:
            raise RuleError(
                f"TooManyUIDsPerMechanism: max_uids {self.max_uids} x {mechanisms} mechanisms exceeds "
                f"{DEFAULT_MAX_UIDS}; set max_uids to {DEFAULT_MAX_UIDS // mechanisms} or fewer first"
            )

    def epoch(self, block: int, netuid: int) -> int:
        """The epoch a commit at `block` belongs to (subtensor's counter, with its look-ahead on a firing block)."""
        return (int(block) + int(netuid) + 1) // (self.tempo + 1)

    def revealed(self, committed_at: int, now: int, netuid: int) -> bool:
        """Whether weights committed at block `committed_at` are visible (and used) at block `now`."""
        return self.epoch(now, netuid) >= self.epoch(committed_at, netuid) + self.reveal_period

    def wait(self, last_set: int | None, now: int) -> int:
        """Blocks before a validator that last set weights on a mechanism at `last_set` may set them there
        again (0: now)."""
        if last_set is None:
            return 0
        return max(0, self.weights_rate_limit - (int(now) - int(last_set)))

    def describe(self) -> str:
        reveal = f"commit-reveal {self.reveal_period} tempo(s)" if self.reveal_period else "commit-reveal off"
        return (
            f"tempo {self.tempo} blocks, weights rate limit {self.weights_rate_limit} blocks, {reveal}, "
            f"max_uids {self.max_uids}, MaxMechanismCount {self.max_mechanisms}"
        )


DEFAULTS = SubnetRules()
RULE_FLAGS = {  # what `scripts/offline_chain.py rules` changes, by field
    "tempo": "blocks between epochs (root)",
    "weights_rate_limit": "blocks between a validator's weight settings on a mechanism (root)",
    "reveal_period": "commit-reveal: epochs until committed weights are revealed, 0 off (the owner)",
    "max_uids": "the most uids the subnet has (the owner); max_uids x mechanisms <= 256",
    "max_mechanisms": "MaxMechanismCount, the most mechanisms a subnet may run (root; up to 16)",
}
# A development chain on one machine: root sets a short tempo and no rate limit, the owner turns commit-reveal
# off, so a few rounds' weights are on chain, and paid, at once (what `audionet-localnet` and the tests run).
DEVELOPMENT = SubnetRules(tempo=10, weights_rate_limit=0, reveal_period=0)


def largest_layout(max_uids: int = DEFAULT_MAX_UIDS, rules: SubnetRules = DEFAULTS) -> int:
    """The most mechanisms a subnet of `max_uids` may run under `rules`' MaxMechanismCount."""
    return max(1, min(rules.max_mechanisms, DEFAULT_MAX_UIDS // max(1, max_uids)))
