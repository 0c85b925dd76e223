"""A validator round replayed on the state it restored from: its records must come out exactly as it saved them
(the same floats), which is what "a killed validator resumes exactly" means."""

from __future__ import annotations

import copy

from audionet.lib.validator.state import ScoreState


def not_replayed(before: ScoreState, after: ScoreState, round_record: dict) -> list[tuple[str, int]]:
    """(service, uid) of every answer of `round_record` whose record in `after` differs from `before` brought up
    to `after`'s time plus that round's rewards."""
    state = copy.deepcopy(before)
    state.sync(after.hotkeys)
    state.advance(after.time)
    for result in round_record["results"]:
        failed = result["gate_name"] == "no_answer"  # the query itself failed: no signed model either
        state.update(result["service"], result["uid"], result["reward"], failed, None if failed else result["model"])
    return [
        (r["service"], r["uid"])
        for r in round_record["results"]
        if state.records[r["service"]].take([r["uid"]]).as_lists()
        != after.records[r["service"]].take([r["uid"]]).as_lists()
    ]
