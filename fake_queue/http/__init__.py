"""The fake queue's HTTP face: the aiohttp app and its routes (worker, client, bench control),
the fast lane for the hot worker routes, the connections with their arrival stamps, and the
server that runs them on a port. State and rules live in fake_queue.queue."""
