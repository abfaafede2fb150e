"""The one review every self-change takes: a rule, a lesson, a profile fact or a skill the agent wants to write into
its own memory passes the same steps (taint, hash, structure, injection scan, then a person, an AI reviewer or no
one, as the settings say), and every decision is a change in the memory history."""
