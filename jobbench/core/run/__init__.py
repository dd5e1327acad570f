"""The one run loop and its seams: plans on their Targets, reps interleaved and saved as they
come, `--reps auto` settling, and a name on the command line resolved to a side."""
