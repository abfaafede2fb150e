"""Reflection: the daily → weekly → monthly chain of notes the agent writes about its own work, and the changes to
its memory those notes propose (through the review pipeline, `memory.review`)."""
