"""Work off the GUI thread: the worker pools, and the long jobs (re-embedding, daily
consolidation) with the dialog that details a consolidation run."""
