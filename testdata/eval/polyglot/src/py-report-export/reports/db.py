"""The database handle shared by the app."""

db = None
