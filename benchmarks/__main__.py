import sys

from audionet.benchmarks.cli import main

sys.exit(main())
