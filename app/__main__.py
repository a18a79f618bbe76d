"""`python -m app`: the same as the `timothy` executable."""

from app.launcher import main

raise SystemExit(main())
