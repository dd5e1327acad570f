"""A fake RunPod queue server with a measured latency model (docs/latency-model.md).

Two packages: `fake_queue.queue`, the queue's state and rules with no HTTP (the one JobQueue on
an injected clock, its latency, fault and fleet models), and `fake_queue.http`, its HTTP face
(the aiohttp app, the fast lane, the connections and the server). Here beside them: what both
entry points share (`options`, `settings`, `command`, `__main__`), `protocol` (stdlib only, what
workers and clients know of the protocol) and `precise_loop` (the real-time event loop the
server and the model workers run on).

Kept import-light on purpose: worker processes import `fake_queue.precise_loop` alone. Entry points:
`fake_queue.http.server` (start_server, ServerThread), `fake_queue.protocol` (worker_env, statuses,
policy names; stdlib only), `fake_queue.settings` (ServerSettings), `fake_queue.queue.latency`
(LatencyModel), `python -m fake_queue` (`fake_queue.command.serve` of the `fake_queue.options` that
`jobbench serve` shares); in-process, without HTTP: `fake_queue.queue.job_queue` (JobQueue, on an
injected `fake_queue.queue.clock.Clock`) and `fake_queue.queue.virtual_clock` (a virtual-time event
loop that is also a clock).
"""
