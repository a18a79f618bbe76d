"""A conversation on screen: turns, Markdown and code blocks, notices, compaction dividers."""
