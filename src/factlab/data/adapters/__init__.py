"""One module per upstream source; each exports `SPECS: list[BenchmarkSpec]`."""
