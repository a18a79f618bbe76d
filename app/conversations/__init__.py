"""Conversations: the window's port onto sessions and turns, and the list on the left."""
