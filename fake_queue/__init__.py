"""A fake RunPod queue server with a measured latency model (docs/latency-model.md).

Kept import-light on purpose: worker processes import `fake_queue.precise_loop` alone.
Entry points: `fake_queue.server` (start_server, ServerThread), `fake_queue.protocol` (worker_env,
statuses, policy names; stdlib only), `fake_queue.settings` (ServerSettings), `fake_queue.latency`
(LatencyModel), `python -m fake_queue` (`fake_queue.command.serve` of the `fake_queue.options`
that `jobbench serve` shares); in-process, without HTTP: `fake_queue.queue` (JobQueue, on an
injected `fake_queue.clock.Clock`) and `fake_queue.virtual_clock` (a virtual-time event loop that
is also a clock).
"""
