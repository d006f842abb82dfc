# Tables and figures under paper/, each produced by the rule of its stage.


rule metaeval:
    input:
        FRANK_OUTPUTS,
        PUBLISHED_OUTPUTS,
        rules.evaluate_qasem_parser.output,


rule paper:
    input:
        "paper/tables/datasets.md",
        "paper/tables/datasets.tex",
        rules.metaeval.input,
