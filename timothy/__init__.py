"""Timothy: a desktop AI assistant whose long-term memory belongs to its owner."""

__version__ = "0.1.0"
