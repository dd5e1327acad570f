"""The words the terminal and the HTML page share, so the two agree to the character: table
cells and titles, the legend beside a run's figures, and what disturbed a scenario's reps."""
