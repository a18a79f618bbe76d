"""A conversation turn: stable prefix + recall, streaming, tools, extraction, compaction."""
