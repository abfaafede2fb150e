"""Sharing a memory scope through a git remote: the entry merge, the transport, and one sync."""
