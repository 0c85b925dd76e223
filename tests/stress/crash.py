"""kill -9 at the worst moments: a validator mid-round (its queries in flight) and mid-save (inside the atomic
write of its state), a miner mid-generation. State must load, scores must resume exactly, nothing answered twice."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx

from audionet.lib.core.auth import sign_request
from audionet.lib.core.wallet import create_wallet
from audionet.lib.localnet import LocalNet
from audionet.lib.services import TTS, names
from audionet.lib.validator.state import ScoreState
from tests.replay import not_replayed
from tests.stress.common import LiveMiner, busy, status_counts

# A child that saves state after state, each one's floats a function of its round, until it is killed.
SAVER = """
import random, sys
from audionet.lib.validator.incentive import Record
from audionet.lib.validator.state import ScoreState
path, uids, services = sys.argv[1], int(sys.argv[2]), tuple(sys.argv[3].split(","))
state = ScoreState(services, hotkeys=[f"hk{u}" for u in range(uids)])
for r in range(1, 10**9):
    rng = random.Random(r)
    state.records = {s: Record.from_lists({"total": [rng.random() for _ in range(uids)]}, uids) for s in services}
    state.round = r
    state.save(path)
    if r == 1:
        print("saved once", flush=True)
"""


def expected_scores(round_: int, uids: int) -> dict[str, list[float]]:
    import random

    rng = random.Random(round_)
    return {s: [rng.random() for _ in range(uids)] for s in names()}


def kill_mid_save(workdir: str, kills: int, uids: int = 256, progress=lambda n: None) -> dict:
    """SIGKILL a process that saves validator state in a loop, `kills` times at random moments."""
    import random

    path = os.path.join(workdir, "state.json")
    rng = random.Random(0)
    loaded = exact = mid_write = 0
    for _ in range(kills):
        child = subprocess.Popen(
            [sys.executable, "-c", SAVER, path, str(uids), ",".join(names())], stdout=subprocess.PIPE, text=True
        )
        child.stdout.readline()
        time.sleep(rng.uniform(0.01, 0.3))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        leftovers = glob.glob(os.path.join(workdir, ".tmp-*.json"))
        mid_write += bool(leftovers)
        for leftover in leftovers:
            os.unlink(leftover)
        if os.path.exists(path):
            state = ScoreState.load(path, names())  # raises if the file is torn
            loaded += 1
            exact += {s: r.total.tolist() for s, r in state.records.items()} == expected_scores(state.round, uids)
        progress(1)
    return {"kills": kills, "landed_mid_write": mid_write, "state_loads": loaded, "scores_exact": exact}


def kill_validator_mid_round(workdir: str, timeout: float = 600.0) -> dict:
    """A validator over two baseline miners is killed while its queries of round 2 are in flight, then runs
    one more round: the saved state loads, and every record of that round continues exactly from it."""
    net = LocalNet(workdir)
    net.add_validator()
    miners = [net.add_miner(f"miner{i}") for i in range(2)]
    args = ["--neuron.seed", "3"]
    state_path = os.path.join(net.state_dir, "state.json")
    try:
        net.wait_ready()
        process = net.start_validator(0, extra_args=args)
        deadline = time.monotonic() + timeout
        validator = create_wallet("validator", "default", net.wallets)
        urls = [(f"http://127.0.0.1:{m.port}", m.hotkey) for m in miners]
        while not (len(net.round_records()) >= 1 and any(busy(url, validator, hotkey) for url, hotkey in urls)):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the validator stopped or never reached round 2")
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        saved = ScoreState.load(state_path, names())
        records = net.round_records()
        status = net.run_validator(1, extra_args=args, timeout=timeout)
        after = net.round_records()
        resumed = ScoreState.load(state_path, names())
    finally:
        net.stop()
    return {
        "killed_after_rounds": len(records),
        "saved_round": saved.round,
        "state_matches_log": saved.round == len(records),
        "restart_exit": status,
        "next_round": after[-1]["round"] if after else None,
        "results_checked": len(after[-1]["results"]) if after else 0,
        "records_not_exact": len(not_replayed(saved, resumed, after[-1])) if len(after) > len(records) else None,
    }


def watch_generation(live: LiveMiner, callers: list[threading.Thread], watchers: int = 4) -> bool:
    """Whether the miner was seen generating before every caller was answered: signed health polled by `watchers`
    threads, each as another permitted caller (signed health is paced per caller, 5 a second, and one poll takes
    tens of milliseconds: a single poller missed an espeak-ng generation of 0.1 s about half the time)."""
    seen, done = threading.Event(), threading.Event()

    def poll(wallet, offset_s: float) -> None:
        done.wait(offset_s)  # staggered: a poll takes a few hundred milliseconds while the miner parses
        while not seen.is_set() and not done.is_set():
            if busy(live.url, wallet, live.miner.hotkey):
                seen.set()

    wallets = [live.validator, *(w for w in live.callers.values() if w is not live.validator)][:watchers]
    pollers = [threading.Thread(target=poll, args=(w, 0.05 * i), daemon=True) for i, w in enumerate(wallets)]
    for poller in pollers:
        poller.start()
    while not seen.is_set() and any(thread.is_alive() for thread in callers):
        seen.wait(0.005)
    done.set()
    return seen.is_set()


def kill_miner_mid_generation(live: LiveMiner, requests: int = 3, timeout: float = 30.0) -> dict:
    """kill -9 a miner while it generates (and others wait), restart it: the callers get an error, not a hang;
    the new process answers fresh requests and refuses the old ones."""
    # About 22 s of speech each (0.1-0.2 s of espeak-ng here), from as many validators of equal stake (one validator
    # holds one place of the line, its share): one generates while the others wait, long enough for the polled
    # health to see it.
    bodies = [
        json.dumps({"text": f"Killed while speaking number {i}. " * 11, "seed": i}).encode() for i in range(requests)
    ]
    signers = [live.validator, *(w for name, w in live.callers.items() if w is not live.validator and name != "low")]
    signed = [sign_request(signers[i], "/v1/tts", body, live.miner.hotkey) for i, body in enumerate(bodies)]
    outcomes: list = [None] * requests

    def call(index: int) -> None:
        started = time.perf_counter()
        try:
            status = httpx.post(f"{live.url}/v1/tts", content=bodies[index], headers=signed[index], timeout=timeout)
            outcomes[index] = (status.status_code, time.perf_counter() - started)
        except httpx.HTTPError as error:
            outcomes[index] = (type(error).__name__, time.perf_counter() - started)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(requests)]
    for thread in threads:
        thread.start()
    generating = watch_generation(live, threads)
    killed_at = time.perf_counter()
    live.net.restart_miner(live.miner)
    for thread in threads:
        thread.join(timeout + 5)
    live.net.wait_ready()
    restarted_s = time.perf_counter() - killed_at
    replay = httpx.post(f"{live.url}/v1/tts", content=bodies[0], headers=signed[0], timeout=timeout).status_code
    fresh = httpx.post(
        f"{live.url}/v1/tts",
        content=bodies[0],
        headers=sign_request(live.validator, "/v1/tts", bodies[0], live.miner.hotkey),
        timeout=timeout,
    ).status_code
    return {
        "in_flight": requests,
        "killed_mid_generation": generating,
        "caller_outcomes": status_counts([o[0] for o in outcomes if o]),
        "callers_hung": sum(o is None for o in outcomes),
        "callers_max_wait_s": max((o[1] for o in outcomes if o), default=None),
        "restarted_s": restarted_s,
        "old_request_replayed": replay,
        "fresh_request": fresh,
        "queue_after": live.queue(TTS.name),
    }
