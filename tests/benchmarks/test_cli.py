"""`audionet-bench <study>`: one entry for every study, the one timing helper and the one result writer."""

import importlib
import inspect
import json
import subprocess
import sys

import pytest

from audionet.benchmarks import cli
from audionet.benchmarks.common.results import write_result
from audionet.benchmarks.common.timing import timed_calls
from audionet.lib.core.devices import device_slug


def test_every_study_is_one_module_with_a_main_that_takes_its_prog():
    for name, (module, what) in cli.STUDIES.items():
        main = importlib.import_module(module).main
        assert "prog" in inspect.signature(main).parameters and what, name


def test_usage_lists_the_studies_and_an_unknown_one_is_one_line(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"  {name} " in out for name in cli.STUDIES)
    assert cli.main(["karaoke"]) == 2
    assert (
        capsys.readouterr().err.strip() == f"audionet-bench: unknown study 'karaoke'; one of: {', '.join(cli.STUDIES)}"
    )
    assert cli.main([]) == 2


def test_a_renamed_study_still_runs_by_its_old_name_with_one_warning(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["services", "--help"])
    assert done.value.code == 0
    captured = capsys.readouterr()
    assert captured.err == "audionet-bench: warning: the study 'services' is now 'device-tables'\n"
    assert "usage: audionet-bench device-tables" in captured.out


def test_a_study_runs_through_the_entry_and_writes_beside_its_command(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "audionet.benchmarks", "wire", "--seconds", "1", "--runs", "1", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    stem = tmp_path / device_slug("cpu") / "wire"
    data = json.loads(stem.with_suffix(".json").read_text())
    command = f"audionet-bench wire --seconds 1 --runs 1 --out {tmp_path}"
    assert data["command"] == command and stem.with_suffix(".md").read_text().startswith(f"Regenerate: `{command}`")
    ours = [clip["results"]["audionet: binary FLAC body"] for clip in data["clips"]]
    assert all(row["bytes_ratio"] > 5 for row in ours)  # FLAC against a JSON float list
    assert stem.with_suffix(".png").stat().st_size > 0


def test_timed_calls_leave_warm_ups_out_and_count_every_call():
    calls = []
    timed = timed_calls(lambda i: calls.append(i) or i * 2, runs=3, warmup=2, clock=iter(range(100)).__next__)
    assert calls == [0, 0, 0, 1, 2] and timed.results == [0, 2, 4]
    assert timed.warmup_s == [1, 1] and timed.seconds == [1, 1, 1] and timed.stats.mean == 1


def test_the_writer_puts_each_result_in_its_device_folder(tmp_path):
    stem = write_result(str(tmp_path), "gpu-x", "study", {"a": 1}, "# title", "audionet-bench study --x 1")
    assert stem == str(tmp_path / "gpu-x" / "study")
    assert json.loads((tmp_path / "gpu-x" / "study.json").read_text()) == {
        "command": "audionet-bench study --x 1",
        "a": 1,
    }
    assert (tmp_path / "gpu-x" / "study.md").read_text() == "Regenerate: `audionet-bench study --x 1`\n\n# title\n"
    with pytest.raises(TypeError):
        write_result(str(tmp_path), "gpu-x", "study", {"a": object()}, "", "c")
