"""A worker (stdlib only, one job at a time, starts in milliseconds) that asks for a refresh as
the runpod SDK does for refresh_worker: `"stopPod": true` in the job-done of the Nth job each of
its processes runs (N = argv[1]). argv[2]: `exit`, it then exits by itself (rc 0), as the SDK
started with the config key does; `stay`, it keeps polling until SIGTERM ends it."""

import json
import os
import sys
import time
import urllib.error
import urllib.request

WORKER = os.environ["RUNPOD_POD_ID"]
KEY = {"Authorization": os.environ["RUNPOD_AI_API_KEY"]}
TAKE = os.environ["RUNPOD_WEBHOOK_GET_JOB"].replace("$ID", WORKER) + "&job_in_progress=0"
DONE = os.environ["RUNPOD_WEBHOOK_POST_OUTPUT"].replace("$RUNPOD_POD_ID", WORKER)


def take():
    try:
        with urllib.request.urlopen(urllib.request.Request(TAKE, headers=KEY), timeout=30) as r:
            return json.loads(r.read()) if r.status == 200 else None
    except (OSError, ValueError):
        time.sleep(0.05)
        return None


def done(job, body):
    url = DONE.replace("$ID", job["id"]) + "&isStream=false"
    request = urllib.request.Request(url, json.dumps(body).encode(), KEY, method="POST")
    urllib.request.urlopen(request, timeout=30).read()


if __name__ == "__main__":
    ask_on, then = int(sys.argv[1]), sys.argv[2]
    ran = 0
    while True:
        job = take()
        if not job:
            continue
        ran += 1
        time.sleep(float(job["input"].get("seconds", 0)))
        body = {"output": {"pid": os.getpid()}}
        if ran == ask_on:
            body["stopPod"] = True
        done(job, body)
        if ran == ask_on and then == "exit":
            sys.exit(0)
