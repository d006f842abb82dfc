"""Synthetic factual errors: labelled (premise, claim) pairs made from real documents, to train the alignment model.

`lexicon` holds the word tables the edits read, `transforms` the edits themselves (each turns a claim into a
supported or unsupported variant), and `pairs` the entry point (`make_synthetic_pairs`) that cuts claims and
premises from documents, applies the transforms and labels the pairs.
"""
