"""Faults over real HTTP: the rules in force set between scenarios (PUT /_bench/faults), every
injected fault an event naming its route, worker and job, the heartbeat's job list read."""

from __future__ import annotations

import httpx

from tests.integration.test_server_worker_api import E, burst, events, post_done, take_one


def test_faults_set_between_scenarios_are_injected_and_logged(client: httpx.Client) -> None:
    assert client.get("/_bench/faults").json() == {"faults": []}
    r = client.put("/_bench/faults", json={"faults": ["job-done:503:1"]})
    assert r.json() == {"faults": ["job-done:503:1"]}
    (job_id,) = burst(client, 1, {"n": 1})
    assert take_one(client, "w1")["id"] == job_id
    r = post_done(client, "w1", job_id, {"output": 1})
    assert r.status_code == 503 and "injected fault job-done:503:1" in r.text
    assert events(client, "fault") == [
        {"t": events(client, "fault")[0]["t"], "ev": "fault", "route": "job-done",
         "kind": "503", "worker": "w1", "job": job_id}
    ]  # fmt: skip
    assert client.put("/_bench/faults", json={"faults": []}).json() == {"faults": []}
    assert post_done(client, "w1", job_id, {"output": 1}).status_code == 200


def test_a_bad_fault_rule_is_a_400_naming_it(client: httpx.Client) -> None:
    r = client.put("/_bench/faults", json={"faults": ["job-done:oops:1"]})
    assert r.status_code == 400 and "KIND must be" in r.json()["error"]
    r = client.put("/_bench/faults", json={"faults": "job-done:500:1"})
    assert r.status_code == 400


def test_the_watchdog_view_reads_the_heartbeats_job_list(client: httpx.Client) -> None:
    burst(client, 2, {"n": 1})
    first, second = take_one(client, "w1")["id"], take_one(client, "w1")["id"]
    view = client.get("/_bench/workers", params={"ids": 1}).json()["w1"]
    assert view["held_ids"] == sorted([first, second]) and view["unlisted"] == []
    client.get(f"{E}/ping/w1", params={"gpu": "cpu", "job_id": f"{first},{second}"})
    assert client.get("/_bench/workers").json()["w1"]["unlisted"] == 0
    view = client.get("/_bench/workers", params={"overdue_s": 0, "ids": 1}).json()["w1"]
    assert view["overdue"] == sorted([first, second])
