"""The loops that learn from a turn: the self-check (ACC), the cerebellum, the consolidator, identity, compaction."""
