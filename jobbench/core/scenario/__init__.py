"""The scenario model and its parsing: the frozen configs a run reads (Scenario, RunConfig), the
Load a rep submits and its arrival profiles, faults, autoscaled fleets, and the variants and
suites of jobbench.toml, each read once with a one-line error naming the flag or key."""
