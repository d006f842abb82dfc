"""QASem parsing: sentences to predicates and QA-SRL-style question-answer pairs."""
