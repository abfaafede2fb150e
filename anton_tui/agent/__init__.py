"""The agent: a chat session whose turns stream typed events, and the tools the model can call."""
