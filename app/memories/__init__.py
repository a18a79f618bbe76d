"""The memory pane: *To confirm*, *Still true?*, *Browse* and *Last recall*, and the actions the
owner takes on a memory."""
