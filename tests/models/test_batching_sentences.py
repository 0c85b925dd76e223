"""The length-bucket batcher and the shared sentence splitter/joiner."""

import threading
import time

import numpy as np
import pytest

from audionet.lib.core.audio import Audio
from audionet.models.hf.batching import LengthBucketBatcher
from audionet.models.sentences import join_clips, split_sentences


def test_concurrent_requests_in_one_bucket_run_as_one_batch_and_each_gets_its_own_result():
    calls = []

    def run_batch(bucket, items):
        calls.append((bucket, list(items)))
        time.sleep(0.05)
        return [f"{bucket}:{item}" for item in items]

    batcher = LengthBucketBatcher(run_batch, window_s=0.3, max_batch=3)
    results = {}

    def submit(bucket, item):
        results[item] = batcher.submit(bucket, item)

    threads = [threading.Thread(target=submit, args=(100, f"a{i}")) for i in range(3)]
    threads.append(threading.Thread(target=submit, args=(200, "b0")))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert results == {"a0": "100:a0", "a1": "100:a1", "a2": "100:a2", "b0": "200:b0"}
    assert sorted(len(items) for _, items in calls) == [1, 3]
    assert {bucket for bucket, items in calls if len(items) == 3} == {100}


def test_a_failing_batch_fails_every_caller_and_the_next_batch_works():
    fail = threading.Event()
    fail.set()

    def run_batch(bucket, items):
        if fail.is_set():
            raise RuntimeError("boom")
        return list(items)

    batcher = LengthBucketBatcher(run_batch, window_s=0.0)
    with pytest.raises(RuntimeError, match="boom"):
        batcher.submit(1, "x")
    fail.clear()
    assert batcher.submit(1, "y") == "y"


def test_long_text_is_split_at_sentences_and_long_sentences_at_commas_or_spaces():
    text = "First one. Second one? " + ", ".join(["clause number"] * 30) + ". " + "x" * 10
    pieces = split_sentences(text, max_chars=60)
    assert pieces[:2] == ["First one.", "Second one?"]
    assert all(len(p) <= 60 for p in pieces)
    assert " ".join(pieces).replace(" ", "") == text.replace(" ", "")


def test_join_puts_a_pause_between_clips_and_resamples_to_the_first_rate():
    a = Audio(np.ones(1000, np.float32) * 0.1, 10_000)
    b = Audio(np.ones(2000, np.float32) * 0.1, 20_000)
    joined = join_clips([a, b], pause_seconds=0.1)
    assert joined.sample_rate == 10_000
    assert abs(len(joined.samples) - (1000 + 1000 + 1000)) <= 2
    assert np.all(joined.samples[1000:2000] == 0)
