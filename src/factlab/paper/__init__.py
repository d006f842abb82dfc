"""Tables and figures for paper/: generated from result files, never edited by hand."""
