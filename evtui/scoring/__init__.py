"""The scorer, metric and reducer library; usable without Textual."""
