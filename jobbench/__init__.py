"""jobbench: how fast does a queue worker drain a burst, and did this branch change it?"""

__version__ = "0.1.0"
