"""`wb prime`: the compact context a cold agent starts from (placeholder, filled below)."""
