"""Rules, lessons and the profile: the engram record, one scope's files (Hippocampus), both scopes together (Cortex)
and the read-only managed tier."""
