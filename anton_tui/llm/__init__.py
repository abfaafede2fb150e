"""Provider-neutral access to the planning and coding models (Anthropic and OpenAI-compatible)."""
