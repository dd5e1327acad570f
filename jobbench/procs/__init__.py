"""Processes: spawning, process groups, CPU pinning, the embedded queue, signals."""
