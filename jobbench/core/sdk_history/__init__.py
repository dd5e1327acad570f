"""SDK history: the commits of a revision range of --repo, one result per commit, kept by commit,
scenario and machine; `jobbench trend` runs a range and finds its change points, `jobbench
bisect` searches one for the first slower commit (docs/history.md). Not the numbered history of
a saved run (`LABEL~N`, results/history.py): that is a label's own earlier results."""
