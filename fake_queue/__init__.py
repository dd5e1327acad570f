"""A fake RunPod queue server with a measured latency model (design.md section 4).

Kept import-light on purpose: worker processes import `fake_queue.precise_loop` alone.
Entry points: `fake_queue.server` (start_server, ServerThread, worker_env), `fake_queue.settings`
(ServerSettings), `fake_queue.latency` (LatencyModel), `python -m fake_queue`.
"""
