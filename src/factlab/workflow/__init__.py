"""The Snakemake workflow's plumbing, beside the stages it runs: each rule's code inputs (`codedeps`), dvc.yaml
generated from the rules (`dvcyaml`), and which ready jobs a scheduling pass may start (`scheduling`, run by the
scheduler plugin `snakemake_scheduler_plugin_factlab`)."""
