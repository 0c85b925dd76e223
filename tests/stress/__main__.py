from audionet.benchmarks.reliability.cli import main

raise SystemExit(main())
