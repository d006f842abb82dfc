"""Published analyses rebuilt from their released inputs (FRANK, ScreenEval/SCALE, TRUE,
QASemConsistency, agreement). Each module turns canonical parquet tables into result tables
(DataFrame in, DataFrame out) and registers its `factlab metaeval <command>` sub-commands
with a `register(commands)` function; file I/O stays in those command functions."""
