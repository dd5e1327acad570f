"""A worker that long-polls the fake queue (stdlib only) and, given a file `sys.argv[1]`,
survives SIGTERM: it writes the file when SIGTERM comes, so a test knows the stop is under
way, and only SIGKILL ends it. Jobs it takes are never finished (it loses them). With `hold`
after the file, it stops polling once a take brought jobs and holds them: the queue sees them
lost only when they are overdue, so a rep lasts seconds, not the one poll in which a worker
that polls on shows them missing from its heartbeat."""

import os
import signal
import sys
import time
import urllib.request
from pathlib import Path


def on_sigterm(signum, frame):
    Path(sys.argv[1]).write_text("SIGTERM")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        signal.signal(signal.SIGTERM, on_sigterm)
    url = os.environ["RUNPOD_WEBHOOK_GET_JOB"].replace("$ID", os.environ["RUNPOD_POD_ID"])
    request = urllib.request.Request(
        url, headers={"Authorization": os.environ["RUNPOD_AI_API_KEY"]}
    )
    hold = sys.argv[2:3] == ["hold"]
    while True:
        try:
            answer = urllib.request.urlopen(request, timeout=30).read()
        except OSError:
            time.sleep(0.05)
            continue
        while hold and answer.strip():
            time.sleep(1)
