"""Every committed study result re-renders unchanged from its JSON: the Markdown people read is a function
of the data the study measured, so a change to a study's code that would alter a committed table shows up
here, and a table can always be regenerated without measuring again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.files import REPO

RESULTS = Path(REPO) / "benchmarks" / "results"


def markdown_of(json_path: Path) -> tuple[Path, str]:
    """(the committed Markdown file, what the study's renderer writes there from the JSON)."""
    from audionet.benchmarks import aggregate, clone_similarity, wire
    from audionet.benchmarks.adversaries import main as adversaries
    from audionet.benchmarks.attacks import report as attacks
    from audionet.benchmarks.attacks import student
    from audionet.benchmarks.device_tables import tables
    from audionet.benchmarks.evaluator_devices import report as evaluator_devices
    from audionet.benchmarks.evaluators import main as evaluators
    from audionet.benchmarks.generation import report as generation
    from audionet.benchmarks.gpu_check import main as gpu_check
    from audionet.benchmarks.gpu_check import tables as gpu_tables
    from audionet.benchmarks.incentive import report as incentive
    from audionet.benchmarks.incentive import selfdealing
    from audionet.benchmarks.judges import main as judges
    from audionet.benchmarks.pool import report as pool
    from audionet.benchmarks.validator_scale import report as validator_scale
    from tests.stress import report as reliability

    data = json.loads(json_path.read_text())
    name = json_path.stem
    if name == "benchmark_summary":  # services: tables.md carries its own command line
        return json_path.with_name("tables.md"), tables.render(data)
    if name == "comparison":
        summaries = [json.loads((RESULTS / f / "benchmark_summary.json").read_text()) for f in data["folders"]]
        body = aggregate.comparison(summaries)
    else:
        renderers = {
            "generation": generation.markdown,
            "wire": wire.markdown,
            "evaluators": evaluators.markdown,
            "evaluators-defence": evaluators.markdown,
            "clone-similarity": clone_similarity.markdown,
            "pool": pool.render,
            "reliability": reliability.render,
            "gpu-check": gpu_check.report,
            "gpu-tables": gpu_tables.markdown,
            "naturalness-student": student.markdown,
        }
        prefixed = {
            "adversaries-": adversaries.markdown,
            "attacks-": attacks.markdown,
            "incentive-self-dealing": selfdealing.markdown,  # before "incentive-": the first prefix that fits
            "incentive-": incentive.markdown,
            "judges-": judges.markdown,
            "validator-scale": validator_scale.markdown,
            "evaluator-devices": evaluator_devices.markdown,
        }
        render = next((r for prefix, r in prefixed.items() if name.startswith(prefix)), None) or renderers[name]
        body = render(data)
    return json_path.with_suffix(".md"), f"Regenerate: `{data['command']}`\n\n{body.rstrip()}\n"


def committed() -> list[Path]:
    skipped = ("gpu_info.json",)  # device facts, no table of their own
    return [p for p in sorted(RESULTS.rglob("*.json")) if p.name not in skipped]


@pytest.mark.parametrize("json_path", committed(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_the_committed_markdown_is_what_its_json_renders(json_path):
    markdown_path, rendered = markdown_of(json_path)
    assert markdown_path.read_text() == rendered


def test_every_committed_table_has_its_json():
    tables = {p for p in RESULTS.rglob("*.md")}
    rendered = {markdown_of(p)[0] for p in committed()}
    assert tables == rendered
