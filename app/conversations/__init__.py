"""Conversations: the window's port onto sessions and turns, the list on the left, and what the
owner does to a conversation there (rename, delete, restore)."""
