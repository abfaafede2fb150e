"""Episodic memory: one JSONL log per session, and recall over it through a derived full-text index."""
