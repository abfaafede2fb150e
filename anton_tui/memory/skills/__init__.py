"""Skills: SKILL.md procedures in the user's folder and read-only sources, their listing, format and install."""
