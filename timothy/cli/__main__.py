"""`python -m timothy.cli`: the command line without the desktop app."""

from timothy.cli import main

raise SystemExit(main())
