"""The settings dialog: one form per settings section, and the provider connection test."""
