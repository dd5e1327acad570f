"""Load drivers: the fake queue's bench-control client and the embedded fake queue process."""
