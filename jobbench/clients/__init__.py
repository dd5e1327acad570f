"""HTTP clients: the fake queue's bench-control API and live endpoints; Locust's user."""
