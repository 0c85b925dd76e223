"""Yuma consensus as subtensor's epoch computes it: the weighted median at the chain's kappa, clipping, trust,
incentive, the bond EMA and dividends, the emission split between mechanisms."""

import numpy as np
import pytest
from bittensor.intents import normalize

from audionet.lib.core import yuma


def test_weights_are_clipped_to_the_stake_weighted_median():
    """Two honest validators (80 % of stake) and one that gives everything to miner 2: its weight is clipped
    to the consensus (0), so it pays nobody and its trust is 0."""
    weights = np.array([[0.5, 0.5, 0.0], [0.6, 0.4, 0.0], [0.0, 0.0, 1.0]])
    epoch = yuma.epoch(weights, [0.5, 0.3, 0.2])
    assert epoch.consensus == pytest.approx([0.5, 0.5, 0.0])  # miner 1: stake 0.5 gives at least 0.5
    ranks = np.array([0.5 * 0.5 + 0.3 * 0.5, 0.5 * 0.5 + 0.3 * 0.4, 0.0])
    assert epoch.incentive == pytest.approx(ranks / ranks.sum())
    assert epoch.validator_trust == pytest.approx([1.0, 0.9, 0.0])


def test_kappa_is_the_chains_u16_half():
    """kappa = 32767/65535 is a hair under 0.5: with two validators of equal stake the median is the higher
    weight (the chain's `weighted_median` walks up while the stake below stays within 1 - kappa)."""
    epoch = yuma.epoch(np.array([[1.0, 0.0], [0.0, 1.0]]), [1.0, 1.0])
    assert epoch.consensus == pytest.approx([1.0, 1.0]) and epoch.validator_trust == pytest.approx([1.0, 1.0])
    tipped = yuma.epoch(np.array([[1.0, 0.0], [0.0, 1.0]]), [1.0, 1.001])
    assert tipped.consensus == pytest.approx([0.0, 1.0])


def test_stored_weights_are_the_sdks_u16():
    uids, values = normalize([0, 1, 2], [0.2, 0.5, 1e-7])
    stored = yuma.quantize(np.array([[0.2, 0.5, 1e-7]]))[0]
    assert stored[uids].tolist() == values and stored[2] == 0


def test_dividends_follow_bonds_and_an_early_bonder_earns_more_per_stake():
    """Both validators end up weighting the same miner; the one that did so epochs earlier holds more of its
    bonds (their EMA moves 10 % an epoch) and gets more dividends than its stake share."""
    stake = [0.5, 0.5]
    bonds = None
    for t in range(12):
        late = [1.0, 0.0] if t < 6 else [0.0, 1.0]
        epoch = yuma.epoch(np.array([[0.0, 1.0], late]), stake, bonds)
        bonds = epoch.bonds
    assert epoch.incentive == pytest.approx([0.0, 1.0])
    assert epoch.dividends[0] > 0.6 and epoch.dividends.sum() == pytest.approx(1.0)
    assert epoch.miner_emission.sum() == pytest.approx(0.5) and epoch.validator_emission.sum() == pytest.approx(0.5)
    assert bonds.max() == yuma.U16_MAX  # stored as the chain stores them: each miner's column max-upscaled


def test_a_uid_registered_since_the_last_epoch_starts_its_bonds_again():
    first = yuma.epoch(np.array([[1.0, 1.0], [1.0, 0.0]]), [0.5, 0.5])
    again = yuma.epoch(np.array([[0.0, 1.0], [0.0, 1.0]]), [0.5, 0.5], first.bonds, fresh=np.array([False, True]))
    assert again.bonds[:, 1] == pytest.approx([yuma.U16_MAX, yuma.U16_MAX])  # both bonded alike from scratch


def test_no_weights_pay_validators_by_stake():
    epoch = yuma.epoch(np.zeros((2, 3)), [3.0, 1.0])
    assert epoch.incentive.tolist() == [0.0, 0.0, 0.0] and epoch.dividends == pytest.approx([0.75, 0.25])


def test_the_emission_split_between_mechanisms():
    assert yuma.split_shares([], 3) == pytest.approx([1 / 3] * 3)
    assert yuma.split_shares([65535], 2) == pytest.approx([1.0, 0.0])  # a short split is padded with zeros
    assert yuma.split_shares([32767, 32767], 2) == pytest.approx([32768 / 65535, 32767 / 65535])  # rounding to 0


def test_an_empty_subnet_has_an_empty_consensus():
    """No validators, or no uids: nothing to pay, no error (a new offline chain has no neurons)."""
    for shape in ((0, 0), (0, 3), (2, 0)):
        epoch = yuma.epoch(np.zeros(shape), [1.0] * shape[0])
        assert epoch.incentive.tolist() == [0.0] * shape[1] and epoch.consensus.tolist() == [0.0] * shape[1]


def test_a_copier_of_a_still_consensus_gets_the_most_trust_any_validator_can():
    """Why the incentive study's copier out-trusts the honest median whatever the curve (docs/scoring.md): trust
    is at most min(1, the consensus's sum); a copier of last epoch's consensus, normalised, gets exactly that
    while the consensus holds still, and every honest validator with noise about the median gets less."""
    rng = np.random.default_rng(0)
    quality = np.linspace(0.2, 1.0, 40)
    honest = np.clip(quality + rng.normal(0, 0.05, (9, quality.size)), 0, None)
    stake = rng.uniform(0.5, 1.5, 9)
    before = yuma.epoch(honest, stake)
    copier = yuma.normalise(before.consensus)
    after = yuma.epoch(np.vstack([honest, copier]), [*stake, 0.05])
    assert after.validator_trust[-1] == pytest.approx(min(1.0, after.consensus.sum()))
    assert after.validator_trust[-1] > after.validator_trust[:-1].max()


def test_yuma3_bonds_follow_each_validators_own_weights_and_reward_the_early_bonder():
    """Yuma3 (`Yuma3On`): a bond is the validator's own EMA of its clipped weight (rate 0.1 without liquid
    alpha); the validator that weighted the miner epochs earlier holds more of its bonds, and earns more."""
    model, bonds = yuma.Yuma3(), None
    for t in range(12):
        late = [1.0, 0.0] if t < 6 else [0.0, 1.0]
        epoch = yuma.epoch(np.array([[0.0, 1.0], late]), [0.5, 0.5], bonds, yuma3=model)
        bonds = epoch.bonds
    own = 1 - 0.9**12, 1 - 0.9**6  # each validator's bond to miner 1: its own EMA of 1.0 since it began
    assert bonds[:, 1] / yuma.U16_MAX == pytest.approx(own, abs=1e-4)
    assert epoch.dividends[0] / epoch.dividends[1] == pytest.approx(own[0] / own[1], rel=1e-3)


def test_liquid_alpha_is_its_low_bound_wherever_a_weight_is_far_from_half_the_consensus():
    """Liquid alpha's sigmoid turns at a weight 0.5 above the consensus (or a bond 0.5 above the weight): with
    weights spread over many miners no cell is near it, so every cell gets about alpha_low, one EMA rate for all."""
    model = yuma.Yuma3(liquid=True)
    quality = np.linspace(0.2, 1.0, 40)
    weights = yuma.normalise(np.clip(quality + np.random.default_rng(1).normal(0, 0.05, (5, 40)), 0, None), axis=1)
    consensus = yuma.weighted_median(weights, np.full(5, 0.2))
    alphas = model.alphas(np.minimum(weights, consensus), np.zeros_like(weights), consensus)
    assert alphas.max() - alphas.min() < 1e-3 and alphas.min() == pytest.approx(model.alpha_low, abs=2e-3)
    assert model.alphas(np.array([[0.9]]), np.zeros((1, 1)), np.array([0.1])).item() > 0.89  # far above: alpha_high


@pytest.mark.parametrize(
    "bonds_model", [None, yuma.Yuma3(), yuma.Yuma3(liquid=True)], ids=["default", "yuma3", "liquid"]
)
def test_with_bonds_penalty_1_a_copier_of_a_still_consensus_earns_the_most_dividends_per_stake(bonds_model):
    """Bonds follow the clipped weights, in which the copy is the largest on every miner: whatever the bond
    model, once bonds settle its dividends per stake are the most any validator gets (docs/scoring.md)."""
    rng = np.random.default_rng(0)
    quality = np.linspace(0.2, 1.0, 40)
    honest = np.clip(quality + rng.normal(0, 0.05, (9, quality.size)), 0, None)
    stake = np.array([*rng.uniform(0.5, 1.5, 9), 0.05])
    copier = yuma.normalise(yuma.epoch(honest, stake[:9]).consensus)
    bonds = None
    for _ in range(60):
        epoch = yuma.epoch(np.vstack([honest, copier]), stake, bonds, yuma3=bonds_model)
        bonds = epoch.bonds
    per_stake = epoch.dividends / yuma.normalise(stake)
    assert per_stake[-1] > per_stake[:-1].max()


@pytest.mark.parametrize(
    "bonds_model", [None, yuma.Yuma3(), yuma.Yuma3(liquid=True)], ids=["default", "yuma3", "liquid"]
)
def test_penalty_1_bonds_a_self_dealers_extra_weight_only_up_to_the_consensus_and_penalty_0_bonds_all_of_it(
    bonds_model,
):
    """A validator that moves weight onto a miner it owns, above the consensus: at penalty 1 its bond there follows
    its weight clipped to the consensus, as the honest validators' do; at penalty 0 its weight as set, so it holds
    more of that miner's bonds and earns more dividends. The miner's pay is the same (the penalty is not read by
    consensus or clipping)."""
    honest = [0.4, 0.3, 0.2, 0.1]
    dealer = [0.4, 0.3, 0.1, 0.2]  # 0.1 moved from miner 2 onto its own miner 3
    weights = np.array([honest, honest, honest, dealer])
    found = {}
    for penalty in (1.0, 0.0):
        bonds = None
        for _ in range(80):
            epoch = yuma.epoch(weights, [0.25] * 4, bonds, yuma3=bonds_model, bonds_penalty=penalty)
            bonds = epoch.bonds
        found[penalty] = epoch
    assert found[1.0].consensus == pytest.approx(honest) and found[1.0].incentive == pytest.approx(found[0.0].incentive)
    share = {penalty: yuma.normalise(e.bonds, axis=0)[3, 3] for penalty, e in found.items()}
    assert share[1.0] == pytest.approx(0.25, abs=1e-3)  # clipped to 0.1, as the others' 0.1
    assert share[0.0] == pytest.approx(0.2 / 0.5, abs=1e-3)  # its 0.2 as set, against the others' 0.1 each
    assert found[0.0].dividends[3] > found[1.0].dividends[3]
