"""What runs: a package per feature (docs/architecture.md). The scenario model
(scenario), the one run loop and its seams (run), the three targets it runs on (fake, sim, live),
the sweep over a grid of simulated scenarios (sweep) and each SDK checkout's environment (sdk)."""
