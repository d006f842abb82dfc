"""Score your own outputs: the checker folder, the library face (`factlab.check`, `factlab.Checker`) and
`factlab check` (api.py), and the rules' commands that package and benchmark the checker (`factlab checker`)."""
