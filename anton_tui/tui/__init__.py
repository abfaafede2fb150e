"""The full-screen Textual app. The only package that imports Textual."""
