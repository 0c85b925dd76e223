"""The checkout as the package `audionet`, without installing it: `PYTHONPATH=pythonpath python -m
audionet.benchmarks gpu-check` (what `make gpu-check` runs). Installed, setup.py's package_dir maps the
checkout's folders to audionet.lib, audionet.models, ...; here the package's search path is the checkout
itself, so `audionet.lib` is ./lib and so on. Nothing else is needed from an install: the host's Python
brings the packages (a step whose packages are missing is reported as skipped)."""

import os

__path__ = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
