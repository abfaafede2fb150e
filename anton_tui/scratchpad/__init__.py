"""Scratchpads: named, persistent Python processes where the agent runs code cells (its working memory)."""
