"""Reports: static, self-contained HTML pages for reading scorer outputs (results/report/<benchmark>/<scorer>.html)."""
