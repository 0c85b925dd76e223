from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
# The checkout keeps its top-level folders; pythonpath/audionet/ links them into one package
# (lib -> audionet.lib, models -> audionet.models, ...), so nothing generic lands in site-packages and the
# editable install is a plain .pth naming pythonpath/, which editors and type checkers follow.
SOURCE = "pythonpath"


def requirements(name: str) -> list[str]:
    lines = (HERE / name).read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip() and not line.startswith("-r")]


setup(
    name="audionet",
    version="0.2.0",
    description="Bittensor subnet node for audio: TTS, voice clone and music miners, scoring validators",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=find_packages(SOURCE, include=["audionet", "audionet.*"]),
    package_dir={"": SOURCE},
    package_data={"audionet.lib.prompts": ["data/*"], "audionet.models.eval": ["weights/*.npz"]},
    install_requires=requirements("requirements.txt"),
    # ray: replicas as Ray actors across hosts (--pool.backend ray); a single-host miner does not need it.
    # families: the generation families served through their own packages (Coqui TTS's XTTS-v2).
    extras_require={
        "dev": requirements("requirements-dev.txt"),
        "families": requirements("requirements-families.txt"),
        "ray": ["ray>=2.40"],
    },
    entry_points={
        "console_scripts": [
            "audionet-miner=audionet.neurons.miner:main",
            "audionet-validator=audionet.neurons.validator:main",
            "audionet-localnet=audionet.neurons.localnet:main",
            "audionet-score=audionet.neurons.score:main",
            "audionet-references=audionet.neurons.references:main",
            "audionet-bench=audionet.benchmarks.cli:main",
        ]
    },
)
