"""The chat in the centre: the panel, the composer, a turn on a worker, first-run set-up, and the
running assistant (chat engine and embedding queue)."""
