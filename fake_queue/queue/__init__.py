"""The fake queue's state and rules without HTTP: the one JobQueue (built in layers: ledger,
running, takes, job_queue) on an injected clock, its latency, fault and fleet models, and what
the runner's watchdog sees of each worker; the HTTP face (fake_queue.http) and the in-process
simulator (jobbench.core.sim) both drive it."""
