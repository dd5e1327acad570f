"""The live Target: bursts or arrival profiles at an endpoint that speaks RunPod's client API,
with no queue and no workers of ours."""
