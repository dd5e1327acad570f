"""Each command's request: the frozen, typed input it takes, whose fields declare the command's
flags (flag.py), so a flag's names, default, help and reader are written once, beside the
value they make. The CLI builds every command's flags when it starts, so these modules import
only what is light (the standard library, workers/policies.py, core/scenario/checks.py); what a
request derives from heavier parts is imported where it is derived."""
