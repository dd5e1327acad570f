"""Measurement: the event scan, per-rep metrics, statistics, the ideal. Pure."""
