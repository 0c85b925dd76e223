"""The music measures an attacker can differentiate (benchmarks/attacks/measures.py gathers them), each a torch
function of an answer's samples at the answer's rate, resampled as the evaluators resample it: musicnn's tags
against the prompt (`tag_adherence`), YAMNet's music probability (the ONNX graph in torch) and, from
basic-pitch's activations (the ONNX graph in torch), smooth stand-ins for what its note decoder counts:
`notes_per_s` (onset peaks above the threshold) and `key_clarity` / `key_fit` (the key profiles against a
pitch-class histogram of the active notes). The decoder itself is not differentiable; the attack's checks
with the real Judge hold it. And the signal's own onsets (`onsets_per_s`, models/eval/music_floor.py), with a
smooth count of the keys pushed over their thresholds.
"""

from __future__ import annotations

import numpy as np

from audionet.benchmarks.attacks.onnx_torch import straight_through
from audionet.benchmarks.attacks.ports import onnx_graph, resampled
from audionet.models.eval.music_floor import LOUD_QUANTILE, key_rises

MUSIC_SOUNDS = "music"  # YAMNet's kind of sound (models/eval/yamnet.py SOUND_KINDS), not the service


def musicnn_log_mel(samples, floor_db=None):
    """models/eval/musicnn.log_mel in torch: librosa's reflect-padded power mel spectrogram under its band floor
    (`floor_db`), float16-rounded (straight through), log10(10000 x + 1)."""
    import librosa
    import torch

    from audionet.models.eval import musicnn

    if samples.shape[-1] < musicnn.N_FFT:
        samples = torch.nn.functional.pad(samples, (0, musicnn.N_FFT - samples.shape[-1]))
    spectrum = (
        torch.stft(
            samples,
            musicnn.N_FFT,
            musicnn.HOP,
            window=torch.hann_window(musicnn.N_FFT),
            center=True,
            pad_mode="reflect",
            return_complex=True,
        ).abs()
        ** 2
    )
    bands = torch.from_numpy(librosa.filters.mel(sr=musicnn.SAMPLE_RATE, n_fft=musicnn.N_FFT, n_mels=musicnn.N_MELS))
    mel = bands.float() @ spectrum
    if floor_db is not None:
        mel = torch.maximum(mel, torch.quantile(mel.amax(dim=0), LOUD_QUANTILE) * 10 ** (-floor_db / 10))
    mel = mel.T
    return torch.log10(10_000 * straight_through(mel, mel.half().float()) + 1)


def tag_functions(evaluators, expect, rate: int) -> dict:
    import torch

    from audionet.lib.scoring import music_words
    from audionet.models.eval import musicnn

    tagger = evaluators.tags
    if not isinstance(tagger, musicnn.MusicnnTagger) or not music_words.concepts_in(expect.description or ""):
        return {}

    def adherence(samples):
        frames = musicnn_log_mel(resampled(samples, rate, musicnn.SAMPLE_RATE), tagger.floor_db)
        if len(frames) < musicnn.PATCH_FRAMES:
            frames = frames.repeat(-(-musicnn.PATCH_FRAMES // len(frames)), 1)
        count = len(frames) // musicnn.PATCH_FRAMES
        batch = frames[: count * musicnn.PATCH_FRAMES].reshape(count, musicnn.PATCH_FRAMES, musicnn.N_MELS)
        scores = torch.cat([net(batch).mean(dim=0) for net in tagger._networks])
        value = music_words.adherence(expect.description or "", dict(zip(tagger.labels, scores)))
        return value if value is not None else torch.zeros(())

    return {"tag_adherence": adherence}


def yamnet_functions(evaluators, rate: int) -> dict:
    import librosa
    import torch

    from audionet.models.eval import yamnet

    if not isinstance(evaluators.sounds, yamnet.YamNet):
        return {}
    graph, scale = onnx_graph("yamnet"), evaluators.sounds._scale
    bands = torch.from_numpy(
        librosa.filters.mel(
            sr=yamnet.SAMPLE_RATE,
            n_fft=yamnet.N_FFT,
            n_mels=yamnet.N_MELS,
            fmin=yamnet.MEL_RANGE_HZ[0],
            fmax=yamnet.MEL_RANGE_HZ[1],
            htk=True,
            norm=None,
        ).astype(np.float32)
    )
    window = torch.from_numpy(np.hanning(yamnet.WINDOW + 1)[:-1].astype(np.float32))
    music = evaluators.sounds._kinds[MUSIC_SOUNDS]

    def probability(samples):
        x = resampled(samples, rate, yamnet.SAMPLE_RATE)
        if x.shape[-1] < yamnet.WINDOW:
            x = torch.nn.functional.pad(x, (0, yamnet.WINDOW - x.shape[-1]))
        frames = x.unfold(0, yamnet.WINDOW, yamnet.HOP)
        magnitude = torch.fft.rfft(frames * window, n=yamnet.N_FFT).abs()
        log_mel = torch.log(magnitude @ bands.T + yamnet.LOG_OFFSET)
        if len(log_mel) < yamnet.PATCH_FRAMES:
            pad = torch.full((yamnet.PATCH_FRAMES - len(log_mel), yamnet.N_MELS), float(np.log(yamnet.LOG_OFFSET)))
            log_mel = torch.cat([log_mel, pad])
        patches = log_mel.unfold(0, yamnet.PATCH_FRAMES, yamnet.PATCH_HOP).permute(0, 2, 1)  # (n, 96, 64)
        scaled = patches / scale["audio_scale"] + scale["audio_zero_point"]
        quantised = straight_through(scaled, scaled.round().clamp(0, 255))
        logits = next(iter(graph(audio=quantised[:, None]).values()))
        probabilities = torch.sigmoid(scale["class_scores_scale"] * (logits - scale["class_scores_zero_point"]))
        return probabilities.mean(dim=0)[music].max()

    return {"music_probability": probability}


def key_profiles():
    """(24, 12) torch: the Krumhansl-Kessler major profiles in the 12 rotations, then the minor ones."""
    import torch

    from audionet.lib.scoring import music_content

    majors_then_minors = [
        np.roll(p, t) for p in (music_content.MAJOR_PROFILE, music_content.MINOR_PROFILE) for t in range(12)
    ]
    return torch.from_numpy(np.stack(majors_then_minors).astype(np.float32))


def correlations(classes, profiles):
    """(24,) torch: each key profile's Pearson correlation with a pitch-class histogram (music_content's, in torch)."""
    a = classes - classes.mean()
    b = profiles - profiles.mean(dim=1, keepdim=True)
    return (b @ a) / (b.norm(dim=1) * a.norm() + 1e-9)


def note_functions(evaluators, expect, rate: int) -> dict:
    import torch

    from audionet.lib.scoring import music_content
    from audionet.models.eval import basic_pitch

    if not isinstance(evaluators.notes, basic_pitch.BasicPitch):
        return {}
    graph = onnx_graph("basic-pitch")
    profiles = key_profiles()
    stated = music_content.parse_key(expect.description or "")

    def activations(samples):
        x = resampled(samples, rate, basic_pitch.SAMPLE_RATE)
        half = basic_pitch.OVERLAP_FRAMES * basic_pitch.HOP // 2
        padded = torch.nn.functional.pad(x, (half, 0))
        count = -(-padded.shape[-1] // basic_pitch.WINDOW_HOP)
        padded = torch.nn.functional.pad(
            padded, (0, count * basic_pitch.WINDOW_HOP + basic_pitch.WINDOW - padded.shape[-1])
        )
        cut = torch.stack(
            [padded[i * basic_pitch.WINDOW_HOP : i * basic_pitch.WINDOW_HOP + basic_pitch.WINDOW] for i in range(count)]
        )[..., None]
        out = graph(**{basic_pitch.INPUT: cut})
        keep = basic_pitch.OVERLAP_FRAMES // 2
        frames = int(x.shape[-1] * (basic_pitch.SAMPLE_RATE // basic_pitch.HOP) / basic_pitch.SAMPLE_RATE)
        note, onset = (
            out[name][:, keep:-keep].reshape(-1, 88)[:frames]
            for name in (basic_pitch.NOTE_OUTPUT, basic_pitch.ONSET_OUTPUT)
        )
        return note, onset

    def histogram(note):
        active = note * torch.sigmoid((note - 0.3) / 0.05)
        pitch_classes = (torch.arange(88) + basic_pitch.LOWEST_MIDI) % 12
        classes = torch.zeros(12).index_add(0, pitch_classes, active.sum(dim=0))
        return classes / classes.sum().clamp_min(1e-6)

    last: dict = {}

    def measured(samples) -> dict:
        key = (id(samples), torch.is_grad_enabled())
        if last.get("key") != key:
            last.update(key=key, value=measure_all(samples))
        return last["value"]

    def measure_all(samples) -> dict:
        """The real measures (basic-pitch's decoder on the port's activations, the Judge's arithmetic) as
        values, the smooth stand-ins' gradients under them (BPDA)."""
        note, onset = activations(samples)
        found = basic_pitch.decode(
            note.detach().numpy(), onset.detach().numpy(), min_frames=evaluators.notes.min_frames
        )
        real = music_content.summary(found, samples.shape[-1] / rate)
        edged = torch.nn.functional.pad(onset.detach(), (0, 0, 1, 1))
        peaks = (edged[1:-1] >= edged[:-2]) & (edged[1:-1] > edged[2:])
        starts = torch.sigmoid((onset - 0.5) / 0.05) * peaks
        # and where the key's note activation over the shortest note clears the decoder's frame threshold
        span = evaluators.notes.min_frames
        ahead = torch.nn.functional.avg_pool1d(torch.nn.functional.pad(note.T[None], (0, span - 1)), span, 1)
        starts = starts * torch.sigmoid((ahead[0].T - 0.3) / 0.05)
        seconds = samples.shape[-1] / rate
        smooth = {"notes_per_s": starts.sum() / seconds}
        keys = correlations(histogram(note), profiles)
        smooth["key_clarity"] = keys.max()
        if stated is not None:
            smooth["key_fit"] = keys[(0 if stated.mode == "major" else 12) + stated.tonic]
            real["key_fit"] = music_content.key_fit(music_content.pitch_class_histogram(found), stated)
        return {name: straight_through(value, torch.tensor(float(real[name]))) for name, value in smooth.items()}

    names = ("notes_per_s", "key_clarity") + (("key_fit",) if stated is not None else ())
    return {name: (lambda samples, name=name: measured(samples)[name]) for name in names}


def content_functions(expect, rate: int) -> dict:
    """The `content` analysis as the Judge computes it: its key measures from `pitch_classes` in torch, and
    `onsets_per_s` (models/eval/music_floor.onsets_per_s) with the gradient of a smooth count: at every frame
    that stands highest around it, how far the keys' summed rise is pushed over `ONSET_DB`, each key counted
    as far as it is pushed over `ONSET_KEY_DB` (the attacker adapts to both)."""
    import torch

    from audionet.lib.scoring import music_content
    from audionet.models.eval import music_floor

    profiles, stated = key_profiles(), music_content.parse_key(expect.description or "")

    def onsets(samples):
        rises = key_rises(samples, rate)
        soft = (torch.sigmoid((rises - music_floor.ONSET_KEY_DB) / 0.5) * rises).sum(dim=0)
        smooth = (torch.sigmoid((soft - music_floor.ONSET_DB) / 2.0) * music_floor.highest_around(soft, rate)).sum()
        seconds = samples.shape[-1] / rate
        real = music_floor.onset_count(rises, rate) / seconds  # the Judge's count (`onsets_per_s`) of these rises
        return straight_through(smooth / seconds, torch.tensor(float(real)))

    def keys(samples):
        return correlations(music_floor.pitch_classes(samples, rate), profiles)

    functions = {"onsets_per_s": onsets, "key_clarity": lambda samples: keys(samples).max()}
    if stated is not None:
        index = (0 if stated.mode == "major" else 12) + stated.tonic
        functions["key_fit"] = lambda samples: keys(samples)[index]
    return functions
