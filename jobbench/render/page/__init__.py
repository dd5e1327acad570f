"""The HTML page: one self-contained file per result, comparison or sweep, with its tables and
inline-SVG plots (no scripts, nothing fetched)."""
