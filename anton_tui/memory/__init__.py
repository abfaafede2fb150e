"""The agent's long-term memory: engrams (rules, lessons, profile), episodes and skills, plus the loops that learn."""
