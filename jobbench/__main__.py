"""`python -m jobbench`: the same CLI as the `jobbench` script."""

from jobbench.cli import main

main()
