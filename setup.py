from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


def requirements(name: str) -> list[str]:
    lines = (HERE / name).read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip() and not line.startswith("-r")]


setup(
    name="audionet",
    version="0.1.0",
    description="Bittensor subnet node for audio: TTS, voice clone and music miners, scoring validators",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=find_packages(include=["lib", "lib.*", "models", "models.*", "neurons", "benchmarks"]),
    package_data={"lib.prompts": ["data/*"]},
    install_requires=requirements("requirements.txt"),
    extras_require={"dev": requirements("requirements-dev.txt")},
    entry_points={
        "console_scripts": [
            "audionet-miner=neurons.miner:main",
            "audionet-validator=neurons.validator:main",
            "audionet-localnet=neurons.localnet:main",
            "audionet-bench=benchmarks.run:main",
            "audionet-bench-aggregate=benchmarks.aggregate:main",
            "audionet-score=neurons.score:main",
        ]
    },
)
