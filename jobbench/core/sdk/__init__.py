"""Each SDK checkout in its own environment: git refs to worktrees, the dependencies a checkout
declares, and the venv built from them once per dependency set."""
