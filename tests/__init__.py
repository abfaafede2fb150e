"""anton-tui test suite."""
