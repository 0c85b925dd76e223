"""localnet.html: one self-contained file with a weight plot per service, why each weight is what it is (the curve
with one point per miner, the reference, the floor, a note where paid miners run one engine), the final table,
every clip the validator received (a player with the FLAC inside the page) with its verdict and its parts and
penalties in words, and time per service. Rendered in headless Chromium (Debian's package; `make chromium`
installs it): every clip loads, every plot is drawn, every curve has its points."""

import os
import re

import numpy as np
import pytest

from audionet.lib.core.audio import Audio, encode_flac
from audionet.lib.scoring.explain import in_words
from audionet.lib.services import registry
from audionet.neurons.localnet_report import clip_path, render
from tests.chromium import needs_chromium, rendered_dom


def miner(uid, name, backend, bounds, weights, engine="baseline:synth"):
    return {
        "uid": uid,
        "name": name,
        "backend": backend,
        "hotkey": f"5Hot{uid}",
        "models": {"tts": f"tts-engine-{uid}", "music": engine},
        "scores": {"tts": 0.5, "music": 0.4},
        "weights": weights,
        "bounds": bounds,
        "eligible": {"tts": True, "music": True},
        "emission": 0.25,
        "mean_latency_s": 1.5,
    }


CURVE = {"floor": 0.78, "power": 1.0, "references": {"tts": 0.55, "music": 0.4}}
MUSIC = {"adherence": 0.3, "musicality": 0.1, "loop_penalty": 1.0, "not_music_penalty": 0.0, "repetition": 1.0}


def result(round_, uid, service, weight, gate=None):
    return {
        "round": round_,
        "uid": uid,
        "service": service,
        "score": 0.0 if gate else 0.6,
        "gate": gate,
        "weight": weight,
        "latency_s": 0.5 + uid,
        "timeout_s": 20.0,
        "audio_s": 1.0,
        "components": (components := MUSIC if service == "music" else {"naturalness": 0.7, "content_penalty": 0.25}),
        "why": None if gate else in_words(registry.get(service).judging, [components]),  # as verdicts.py writes it
    }


@pytest.fixture
def localnet(tmp_path):
    """Three rounds of two miners and two services, as rounds.jsonl and --neuron.save_audio leave them; the
    third round's music from uid 2 never arrived (no clip)."""
    report = {
        "rounds": 3,
        "curve": CURVE,
        "miners": [
            miner(1, "miner0", "best offline", {"tts": 0.55, "music": 0.4}, {"tts": 1.0, "music": 0.5}),
            miner(2, "miner1", "cheap baseline", {"tts": 0.339, "music": 0.4}, {"tts": 0.0, "music": 0.5}),
        ],
    }
    records = []
    for n in (1, 2, 3):
        results = []
        for uid in (1, 2):
            for service in ("tts", "music"):
                gate = "wrong length: 9.0 s" if (uid, service) == (2, "tts") else None
                results.append(result(n, uid, service, 0.0 if uid == 2 else 0.5 * n / 3, gate))
                if (n, uid, service) != (3, 2, "music"):
                    path = clip_path(str(tmp_path / "audio"), n, uid, service)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    tone = 0.3 * np.sin(2 * np.pi * 220 * uid * np.arange(16_000) / 16_000)
                    with open(path, "wb") as handle:
                        handle.write(encode_flac(Audio(tone.astype(np.float32), 16_000)))
        records.append({"round": n, "results": results})
    return report, records, str(tmp_path / "audio")


def test_the_page_holds_plots_the_table_every_clip_and_timing(localnet):
    text = render(*localnet)
    assert text.count('<svg class="plot"') == 2 and text.count('<polyline fill="none" stroke="#') == 4  # per miner
    assert text.count("<audio") == 11 and text.count("data:audio/flac;base64,") == 11  # 12 answers, one without clip
    assert text.count("no audio") == 1 and text.count('class="gated">wrong length: 9.0 s') == 3
    assert "miner1 (cheap baseline)" in text and "tts score / weight" in text and "timeout s" in text
    assert not re.search(r"""(src|href)=["'](?!data:)""", text)  # nothing outside the file


@needs_chromium
def test_chromium_plays_every_clip_and_draws_every_plot(localnet, tmp_path):
    page = tmp_path / "localnet.html"
    page.write_text(render(*localnet))
    dom = rendered_dom(page)
    assert 'data-checked="yes"' in dom, dom[-2000:]
    assert dom.count('data-state="playable"') == 11 and 'data-state="broken"' not in dom
    assert dom.count('data-drawn="yes"') == 4 and 'data-drawn="no"' not in dom  # two weight plots, two curves
    assert dom.count('data-points="2"') == 2  # each curve with one point per miner
    # and it would tell: a clip that is not audio is marked broken
    report, records, audio_dir = localnet
    with open(clip_path(audio_dir, 1, 1, "tts"), "wb") as handle:
        handle.write(b"fLaC" + bytes(200))
    page.write_text(render(report, records, audio_dir))
    dom = rendered_dom(page)
    assert dom.count('data-state="playable"') == 10 and dom.count('data-state="broken"') == 1


def test_the_page_says_why_each_weight_is_what_it_is(localnet):
    text = render(*localnet)
    assert text.count('<svg class="curve"') == 2 and text.count('<circle class="point"') == 4
    # the cheap miner's TTS: its bound is 62% of the reference, under the floor, so its weight is 0
    assert "62% of the reference, at or under the floor of 78%: weight 0" in text
    assert "100% of the reference, 100% of the way up from the floor: weight 1.000" in text
    # each clip's parts and penalties, by the declaration's names
    assert "parts adherence 0.30, musicality 0.10; penalties: loop took 100%" in text
    assert "parts naturalness 0.70; penalties: content took 25%" in text
    # both miners paid for music run one engine
    assert "miner0 (best offline), miner1 (cheap baseline) run the same engine for music (baseline:synth)" in text


@needs_chromium
def test_chromium_shows_the_explanations(localnet, tmp_path):
    page = tmp_path / "localnet.html"
    page.write_text(render(*localnet))
    dom = rendered_dom(page)
    assert dom.count('<svg class="curve"') == 2 and dom.count('data-points="2"') == 2, dom[-2000:]
    assert dom.count('class="why"') == 4 and "at or under the floor of 78%: weight 0" in dom
    assert "penalties: loop took 100%" in dom and 'class="same-engine"' in dom
