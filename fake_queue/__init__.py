"""A fake RunPod queue server with a measured latency model (docs/latency-model.md).

Two packages: `fake_queue.queue`, the queue's state and rules with no HTTP (the one JobQueue on
an injected clock, its latency, fault and fleet models), and `fake_queue.http`, its HTTP face
(the aiohttp app, the fast lane, the connections and the server). Here beside them: what both
entry points share (`options`, `settings`, `command`, `__main__`), `protocol` (stdlib only, what
workers and clients know of the protocol), `precise_loop` (the real-time event loop the server
and the model workers run on) and `api`, the public surface.

What other code may use of it is `fake_queue.api` (the queue in-process, its models, `serve`) and
the four modules it names, each on the standard library alone: `protocol`, `precise_loop`,
`options` and `queue.scalers`. Kept import-light on purpose: worker processes import
`fake_queue.precise_loop` alone. `python -m fake_queue` runs the server
(`fake_queue.command.serve` of the `fake_queue.options` that `jobbench serve` shares).
"""
