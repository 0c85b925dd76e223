"""Bytes on the wire and encode+decode CPU time of a response carrying 15 s of
32 kHz audio: our binary FLAC body versus the anchor (audio as a JSON list of
floats, as BittAudio sends it) and FLAC-in-base64-JSON, side by side in one run.

    python -m audionet.benchmarks.wire [--seconds 15] [--runs 7] [--json out.json]
"""

from __future__ import annotations

import base64
import json
import os
import platform
import statistics
import time

import numpy as np

from audionet.lib.audio import Audio, decode_flac, encode_flac
from audionet.lib.config import Parser
from audionet.lib.protocol import ResponseMeta, pack_response, sha256_hex, unpack_response
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


def measure(audio: Audio, runs: int) -> dict:
    results = {}
    for name, (encode, decode) in FORMATS.items():
        cpu = []
        for _ in range(runs):
            started = time.process_time()
            body = encode(audio)
            decode(body)
            cpu.append(time.process_time() - started)
        results[name] = {"bytes": len(body), "cpu_s": statistics.median(cpu)}
    return results


PROMPTS = (
    "upbeat jazz with piano, bass and drums, 120 bpm",
    "calm ambient pad and strings, slow",
    "sad piano ballad",
    "energetic rock with guitar and drums",
)


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args(argv)
    generator = ProceduralMusicGenerator()
    print(
        f"{args.seconds:g} s of 32 kHz music per clip, median CPU of {args.runs} runs, "
        f"machine: {platform.machine()}, {os.cpu_count()} cores"
    )
    print(f"{'clip':38} {'format':28} {'bytes':>11} {'enc+dec CPU ms':>15} {'bytes ratio':>12} {'CPU ratio':>10}")
    clips = []
    for prompt in PROMPTS:
        results = measure(generator.generate(prompt, args.seconds, seed=1), args.runs)
        anchor = results["anchor: JSON float list"]
        for name, row in results.items():
            row["bytes_ratio"] = anchor["bytes"] / row["bytes"]
            row["cpu_ratio"] = anchor["cpu_s"] / row["cpu_s"]
            print(
                f"{prompt[:38]:38} {name:28} {row['bytes']:>11,} {row['cpu_s'] * 1000:>15.1f} "
                f"{row['bytes_ratio']:>11.1f}x {row['cpu_ratio']:>9.1f}x"
            )
        clips.append({"prompt": prompt, "results": results})
    ours = [clip["results"]["audionet: binary FLAC body"] for clip in clips]
    for key, label in (("bytes_ratio", "bytes"), ("cpu_ratio", "encode+decode CPU")):
        values = [row[key] for row in ours]
        print(f"binary FLAC body vs anchor, {label}: min {min(values):.1f}x, median {statistics.median(values):.1f}x")
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump({"seconds": args.seconds, "runs": args.runs, "clips": clips}, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
