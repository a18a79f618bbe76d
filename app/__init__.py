"""Timothy's desktop app (PySide6 only); it talks to the core in `timothy/` through plain calls."""
