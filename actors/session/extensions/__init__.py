"""The Session's extension methods, one small handler object each (table.py)."""
