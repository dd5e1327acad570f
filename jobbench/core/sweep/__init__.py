"""A sweep (`jobbench sweep`): a grid of scenarios read from flags or a `[sweeps.NAME]` table,
every cell simulated in virtual time into one document."""
