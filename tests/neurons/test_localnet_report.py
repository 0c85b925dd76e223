"""localnet.html: one self-contained file with a weight plot per service, the final table, every clip the
validator received (a player with the FLAC inside the page) and its verdict, and time per service. Rendered in
headless Chromium (Debian's package; `make chromium` installs it): every clip loads, every plot is drawn."""

import os
import re

import numpy as np
import pytest

from audionet.lib.core.audio import Audio, encode_flac
from audionet.neurons.localnet_report import clip_path, render
from tests.chromium import needs_chromium, rendered_dom


def miner(uid, name, backend):
    return {
        "uid": uid,
        "name": name,
        "backend": backend,
        "hotkey": f"5Hot{uid}",
        "scores": {"tts": 0.5, "music": 0.4},
        "weights": {"tts": 0.5, "music": 0.5},
        "emission": 0.25,
        "mean_latency_s": 1.5,
    }


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
    }


@pytest.fixture
def localnet(tmp_path):
    """Three rounds of two miners and two services, as rounds.jsonl and --neuron.save_audio leave them; the
    third round's music from uid 2 never arrived (no clip)."""
    report = {"rounds": 3, "miners": [miner(1, "miner0", "best offline"), miner(2, "miner1", "cheat: 1 s loop")]}
    records = []
    for n in (1, 2, 3):
        results = []
        for uid in (1, 2):
            for service in ("tts", "music"):
                gate = "wrong length: 9.0 s" if uid == 2 else None
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
    assert text.count('<svg class="plot"') == 2 and text.count("<polyline") == 4  # a line per miner and service
    assert text.count("<audio") == 11 and text.count("data:audio/flac;base64,") == 11  # 12 answers, one without clip
    assert text.count("no audio") == 1 and text.count('class="gated">wrong length: 9.0 s') == 6
    assert "miner1 (cheat: 1 s loop)" in text and "tts score / weight" in text and "timeout s" in text
    assert not re.search(r"""(src|href)=["'](?!data:)""", text)  # nothing outside the file


@needs_chromium
def test_chromium_plays_every_clip_and_draws_every_plot(localnet, tmp_path):
    page = tmp_path / "localnet.html"
    page.write_text(render(*localnet))
    dom = rendered_dom(page)
    assert 'data-checked="yes"' in dom, dom[-2000:]
    assert dom.count('data-state="playable"') == 11 and 'data-state="broken"' not in dom
    assert dom.count('data-drawn="yes"') == 2 and 'data-drawn="no"' not in dom
    # and it would tell: a clip that is not audio is marked broken
    report, records, audio_dir = localnet
    with open(clip_path(audio_dir, 1, 1, "tts"), "wb") as handle:
        handle.write(b"fLaC" + bytes(200))
    page.write_text(render(report, records, audio_dir))
    dom = rendered_dom(page)
    assert dom.count('data-state="playable"') == 10 and dom.count('data-state="broken"') == 1
