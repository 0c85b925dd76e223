"""Bytes on the wire and encode+decode CPU time of a response carrying 15 s of
32 kHz audio: our binary FLAC body versus the anchor (audio as a JSON list of
floats, as BittAudio sends it) and FLAC-in-base64-JSON, side by side in one run.
Writes <out>/<device-slug>/wire.{json,md,png}.

    audionet-bench wire [--seconds 15] [--runs 7]
"""

from __future__ import annotations

import base64
import json
import os
import platform
import statistics
import time

import numpy as np

from audionet.benchmarks.common.flags import study_parser
from audionet.benchmarks.common.results import command_line, pyplot, save_figure, table, write_result
from audionet.benchmarks.common.timing import timed_calls
from audionet.lib.core.audio import Audio, decode_flac, encode_flac
from audionet.lib.core.devices import device_slug
from audionet.lib.core.protocol import ResponseMeta, pack_response, sha256_hex, unpack_response
from audionet.lib.services import MUSIC
from audionet.models.baselines.synth import ProceduralMusicGenerator

META = ResponseMeta(
    service="music", model="baseline:synth", device="cpu", generation_s=1.0, seed=0, request_sha256=sha256_hex(b"")
)


def anchor_json(audio: Audio) -> bytes:
    return json.dumps({"audio": audio.samples.tolist(), "sample_rate": audio.sample_rate}).encode()


def from_anchor(body: bytes) -> Audio:
    data = json.loads(body)
    return Audio(np.asarray(data["audio"], dtype=np.float32), data["sample_rate"])


def base64_json(audio: Audio) -> bytes:
    return json.dumps({"meta": META.model_dump(), "flac_b64": base64.b64encode(encode_flac(audio)).decode()}).encode()


def from_base64_json(body: bytes) -> Audio:
    data = json.loads(body)
    return decode_flac(base64.b64decode(data["flac_b64"]), max_seconds=60, max_bytes=10**8)


def binary_body(audio: Audio) -> bytes:
    return pack_response(META, encode_flac(audio))


def from_binary_body(body: bytes) -> Audio:
    _meta, flac = unpack_response(body)
    return MUSIC.decode_answer(flac)


FORMATS = {
    "anchor: JSON float list": (anchor_json, from_anchor),
    "FLAC base64 in JSON": (base64_json, from_base64_json),
    "audionet: binary FLAC body": (binary_body, from_binary_body),
}


def codec_costs(audio: Audio, runs: int) -> dict:
    """Per format: body bytes and the median CPU seconds of encode + decode."""
    results = {}
    for name, (encode, decode) in FORMATS.items():
        timed = timed_calls(
            lambda _, encode=encode, decode=decode: decode(encode(audio)), runs=runs, clock=time.process_time
        )
        results[name] = {"bytes": len(encode(audio)), "cpu_s": statistics.median(timed.seconds)}
    return results


PROMPTS = (
    "upbeat jazz with piano, bass and drums, 120 bpm",
    "calm ambient pad and strings, slow",
    "sad piano ballad",
    "energetic rock with guitar and drums",
)


def main(argv: list[str], prog: str = "audionet-bench wire") -> int:
    parser = study_parser(prog, __doc__)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    generator = ProceduralMusicGenerator()
    clips = []
    for prompt in PROMPTS:
        results = codec_costs(generator.generate(prompt, args.seconds, seed=1), args.runs)
        anchor = results["anchor: JSON float list"]
        for row in results.values():
            row["bytes_ratio"] = anchor["bytes"] / row["bytes"]
            row["cpu_ratio"] = anchor["cpu_s"] / row["cpu_s"]
        clips.append({"prompt": prompt, "results": results})
    data = {"seconds": args.seconds, "runs": args.runs, "machine": platform.machine(), "clips": clips}
    text = markdown(data)
    write_result(args.out, device_slug("cpu"), "wire", data, text, command_line(prog, argv), lambda p: plot(data, p))
    print(text)
    return 0


def markdown(data: dict) -> str:
    rows = [
        [
            c["prompt"],
            name,
            f"{r['bytes']:,}",
            f"{r['cpu_s'] * 1000:.1f}",
            f"{r['bytes_ratio']:.1f}x",
            f"{r['cpu_ratio']:.1f}x",
        ]
        for c in data["clips"]
        for name, r in c["results"].items()
    ]
    ours = [c["results"]["audionet: binary FLAC body"] for c in data["clips"]]
    summary = [
        f"binary FLAC body vs anchor, {label}: min {min(r[key] for r in ours):.1f}x, "
        f"median {statistics.median(r[key] for r in ours):.1f}x"
        for key, label in (("bytes_ratio", "bytes"), ("cpu_ratio", "encode+decode CPU"))
    ]
    head = (
        f"# Wire formats: {data['seconds']:g} s of 32 kHz music per clip, median CPU of {data['runs']} runs "
        f"({data['machine']}, {os.cpu_count()} cores)\n\n"
    )
    headers = ["clip", "format", "bytes", "enc+dec CPU ms", "bytes ratio", "CPU ratio"]
    return head + table(headers, rows) + "\n" + "\n".join(f"- {line}" for line in summary) + "\n"


def plot(data: dict, path: str) -> str:
    names = list(FORMATS)
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(11, 3.8))
    for ax, key, label in ((left, "bytes", "bytes per response"), (right, "cpu_s", "encode + decode CPU s")):
        values = [statistics.median(c["results"][n][key] for c in data["clips"]) for n in names]
        ax.barh(names, values, color=["C3", "C1", "C2"])
        ax.set(xscale="log", xlabel=f"{label} (median over clips, log)")
        ax.invert_yaxis()
    fig.suptitle(f"{data['seconds']:g} s of 32 kHz music: the anchor, base64 FLAC in JSON, our binary FLAC body")
    return save_figure(fig, path)
