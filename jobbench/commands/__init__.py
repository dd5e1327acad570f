"""Commands: one module per command; a typed request in, an exit code out."""
