"""Output as text: the terminal's tables and progress (rich only in terminal.py), and the
comparison as Markdown, CSV and JSON, the history table, and a sweep's CSV and summary."""
