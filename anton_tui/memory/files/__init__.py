"""Memory files on disk: locks, whole-line reads, rewrites that carry over what Anton appends, and backups."""
