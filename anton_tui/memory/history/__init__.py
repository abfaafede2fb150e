"""The history of memory changes: one git repository per scope, a commit per change, its log, undo and reset."""
