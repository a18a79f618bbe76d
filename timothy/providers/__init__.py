"""Chat and embedding providers behind two small protocols (see `base`)."""
