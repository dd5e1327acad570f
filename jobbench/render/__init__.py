"""One module per output format; rich is imported only by render/terminal.py."""
