"""The judgement (docs/architecture.md): two results paired scenario by scenario (pairing),
compared metric by metric (comparison), each row decided by the rule (decision) after its jobs'
correctness and its workers' behaviour (correctness, behaviour, row_checks), and the call's
verdict and exit code (gate); beside it, a suite's every variant on one table (side_by_side),
take-ahead's held cost (held_compare) and an SDK history's change points (change_points,
level_steps). It reads the documents of results/ and writes none: a command saves them."""
