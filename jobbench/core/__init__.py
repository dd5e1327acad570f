"""The run loop, its Target and Load seams, and the frozen configs they read."""
