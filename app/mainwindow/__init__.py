"""The main window and its chrome: the banner, the status bar, the menus, the remembered state,
and the memory's upkeep (re-embedding, daily consolidation) as the window shows it."""
