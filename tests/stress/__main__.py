from tests.stress.cli import main

raise SystemExit(main())
