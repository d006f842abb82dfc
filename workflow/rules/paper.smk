# Tables and figures under paper/, each produced by the rule of its stage.


rule paper:
    input:
        "paper/tables/datasets.md",
        "paper/tables/datasets.tex",
