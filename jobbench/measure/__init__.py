"""Measurement: the one event scan, per-rep figures, plot series, statistics, the ideal. Pure."""
