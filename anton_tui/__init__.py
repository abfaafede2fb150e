"""anton-tui: a full-screen terminal app for an LLM agent whose mind lives in plain files."""

__version__ = "0.1.0"
