"""`factlab checker latency`: the sample of real pairs it times (sources within 10% of a word-piece count, outputs
of a number of sentences) and the machine it records, on real WiCE claims (from the mirror), real FRANK summaries
(tests/fixtures/frank_baselines_sample.jsonl) and a real /proc/cpuinfo cut.

Word pieces are MiniLM's (the checker's tokenizer), counted once and written here; the windows, the choices and
the cut outputs are worked by hand from them and from the records' texts."""

from __future__ import annotations

import platform
from pathlib import Path

import pandas as pd
import pytest

from factlab.checker.folder import CheckerSettings
from factlab.checker.pipeline.latency_command import (
    INSTRUCTION_SETS,
    alignscore_pair_count,
    cpu_record,
    latency_output,
    latency_sample,
    source_window,
    word_pieces,
)
from factlab.data.adapters.wice import adapt_wice_claims
from factlab.errors import FactlabError
from factlab.runtime import load_tokenizer

FIXTURES = Path(__file__).parent / "fixtures"

# Real WiCE dev claims: their cited page's word pieces, and what the claim's Wikipedia context offers.
WICE_PIECES = {
    "wice-dev04076": 1796,  # context: 8 sentences
    "wice-dev00003": 1960,  # context: 1 sentence
    "wice-dev00764": 1970,  # context: 2 sentences
    "wice-dev00624": 1878,  # no context
    "wice-dev01892": 2216,  # context: 4 sentences
}
NINA_BORN = (
    "She was born in 1936 and won the bronze medal in the fours with Gill Miles, Ann Sutherland and Pam John at the 2002 "
    "Commonwealth Games in Manchester."
)
NINA = f"Nina Shipperlee is a former Welsh international lawn bowler. \n {NINA_BORN}"
NINA_CLAIM = (
    "She still bowls for the Whitchurch Bowling Club in North Cardiff and in 1988 became the clubs first member to be "
    "capped by Wales."
)
LIMA = (
    'In 2012, she came in 4th on the "Forbes" top-earning models list, estimated to have earned $7.3 million in one '
    "year. In 2013, she came in 3rd place and in 2014 she came in 2nd place with earnings of $8 million. In 2015, she "
    "came in 2nd place with earnings of $9 million."
)
WILD_SKIN = (
    '"Wild Skin" (French: "La Peau sauvage") is a Canadian short drama film, directed by Ariane Louis-Seize and '
    "released in 2016. Without dialogue, the film stars Marilyn Castonguay as a woman who has a strange erotic "
    "experience after unexpectedly finding a python in her apartment."
)
HINDUISM = (
    "The majority of South African Muslims are Indian or belong to the multi-ethnic community in the Western Cape. \n "
    "The proportion of Indian South Africans following Hinduism has decreased from 50% in 1996 to 47.27% in 2001. "
    'This further decreased to 41.3\xa0% in 2016 , mainly due to the conversion of "Hindus into Christian" by the '
    "Christian missionaries."
)

# The first processor's block of a 2-core cloud machine's /proc/cpuinfo, verbatim: an AMD EPYC with AVX2, AVX-512 and
# AVX512-BF16, without AMX.
EPYC_CPUINFO = "\n".join(
    [
        "processor\t: 0",
        "vendor_id\t: AuthenticAMD",
        "cpu family\t: 25",
        "model\t\t: 17",
        "model name\t: AMD EPYC",
        "stepping\t: 1",
        "microcode\t: 0x1000065",
        "cpu MHz\t\t: 2596.124",
        "cache size\t: 1024 KB",
        "physical id\t: 0",
        "siblings\t: 2",
        "core id\t\t: 0",
        "cpu cores\t: 2",
        "apicid\t\t: 0",
        "initial apicid\t: 0",
        "fpu\t\t: yes",
        "fpu_exception\t: yes",
        "cpuid level\t: 28",
        "wp\t\t: yes",
        (
            "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht "
            "syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid "
            "extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt "
            "tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy cr8_legacy abm sse4a "
            "misalignsse 3dnowprefetch osvw topoext cpuid_fault vmmcall fsgsbase tsc_adjust bmi1 avx2 smep bmi2 "
            "erms invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw "
            "avx512vl xsaveopt xsavec xgetbv1 xsaves avx512_bf16 clzero xsaveerptr arat avx512vbmi umip "
            "avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid fsrm"
        ),
        "bugs\t\t: sysret_ss_attrs null_seg spectre_v1 spectre_v2 spec_store_bypass srso spectre_v2_user tsa",
        "bogomips\t: 5192.24",
        "TLB size\t: 3584 4K pages",
        "clflush size\t: 64",
        "cache_alignment\t: 64",
        "address sizes\t: 48 bits physical, 48 bits virtual",
        "power management:",
        "",
        "",
    ]
)


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


@pytest.fixture(scope="module")
def wice(raw):
    frame = adapt_wice_claims(raw).frame
    return frame[frame["example_id"].isin(list(WICE_PIECES))].reset_index(drop=True)


@pytest.fixture(scope="module")
def frank():
    return pd.read_json(FIXTURES / "frank_baselines_sample.jsonl", lines=True)


def test_source_window_is_ten_percent_either_side_both_included():
    assert source_window(2000) == (1800, 2200)
    assert source_window(1995) == (1796, 2194)  # 1795.5 up, 2194.5 down
    assert source_window(1996) == (1797, 2195)  # 1796.4 up, 2195.6 down
    assert source_window(2015) == (1814, 2216)  # 1813.5 up, 2216.5 down
    assert source_window(2014) == (1813, 2215)  # 1812.6 up, 2215.4 down


def test_word_pieces_of_the_real_sources(wice, tokenizer):
    counted = dict(zip(wice["example_id"], word_pieces(tokenizer, wice["source"].tolist()), strict=True))
    assert counted == WICE_PIECES
    # nina ship ##per ##lee is a former welsh international lawn bowler .
    assert word_pieces(tokenizer, ["Nina Shipperlee is a former Welsh international lawn bowler."]) == [12]
    assert word_pieces(tokenizer, []) == []


def test_a_claim_is_preceded_by_the_sentences_it_continues(wice):
    claim = wice.set_index("example_id").loc["wice-dev00764"]
    assert latency_output(claim["output"], claim["claim_context"], 3) == (f"{NINA} {NINA_CLAIM}", 2)
    assert latency_output(claim["output"], claim["claim_context"], 2) == (f"{NINA_BORN} {NINA_CLAIM}", 1)
    assert latency_output(claim["output"], claim["claim_context"], 1) == (NINA_CLAIM, 0)
    assert latency_output(claim["output"], claim["claim_context"], 4) is None  # two sentences before it, not three
    assert latency_output(claim["output"], None, 2) is None


def test_an_output_of_more_sentences_is_cut_to_its_first(frank):
    summary = frank.set_index("example_id").loc["frank-ed8674cc15b29a87d8df8de1efee353d71122272-bart", "output"]
    first_three = (
        "oxford scientists say a mercury-like body struck the young earth . the object would have been the heat source "
        "for our planet 's core . the same object could have been responsible for creating the moon ."
    )
    assert latency_output(summary, None, 3) == (first_three, 0)
    assert latency_output(summary, "ignored: the output has its sentences", 3) == (first_three, 0)


def test_sample_keeps_sources_in_the_window_with_enough_sentences(wice, tokenizer):
    # 2,000 ± 10% = 1,800-2,200: dev00764 (1,970), dev00003 (1,960) and dev00624 (1,878) lie in it; dev04076 (1,796)
    # and dev01892 (2,216) do not. Three sentences: dev00764's claim has two before it, dev00003's one, dev00624's none.
    sample, qualifying = latency_sample(wice, tokenizer, 1, 2000, 3, "wice_claims")
    assert qualifying == 1
    assert sample.to_dict("records") == [
        {
            "id": "wice-dev00764",
            "source": sample["source"][0],
            "output": f"{NINA} {NINA_CLAIM}",
            "source_tokens": 1970,
            "context_sentences": 2,
        }
    ]
    # Two sentences: dev00003's claim qualifies too (30 and 40 pieces from 2,000); dev00624 still has one sentence.
    sample, qualifying = latency_sample(wice, tokenizer, 2, 2000, 2, "wice_claims")
    assert (qualifying, list(sample["id"]), list(sample["source_tokens"])) == (
        2,
        ["wice-dev00764", "wice-dev00003"],
        [1970, 1960],
    )
    assert sample["output"][1] == WILD_SKIN and list(sample["context_sentences"]) == [1, 1]
    # One sentence: every source in the window, closest first (1,970, 1,960, 1,878), the claims as they are.
    sample, qualifying = latency_sample(wice, tokenizer, 3, 2000, 1, "wice_claims")
    assert (qualifying, list(sample["id"])) == (3, ["wice-dev00764", "wice-dev00003", "wice-dev00624"])
    assert sample["output"][0] == NINA_CLAIM and list(sample["context_sentences"]) == [0, 0, 0]


def test_sample_window_edges(wice, tokenizer):
    # 1,995: the window starts at 1,796, dev04076's count; 1,996: at 1,797, one above it.
    sample, qualifying = latency_sample(wice, tokenizer, 2, 1995, 3, "wice_claims")
    assert (qualifying, list(sample["id"]), list(sample["source_tokens"])) == (
        2,
        ["wice-dev00764", "wice-dev04076"],
        [1970, 1796],
    )
    assert sample["output"][1] == LIMA
    assert latency_sample(wice, tokenizer, 1, 1996, 3, "wice_claims")[1] == 1
    # 2,015: the window ends at 2,216, dev01892's count (45 and 201 pieces away); 2,014: at 2,215.
    sample, qualifying = latency_sample(wice, tokenizer, 2, 2015, 3, "wice_claims")
    assert (qualifying, list(sample["id"])) == (2, ["wice-dev00764", "wice-dev01892"])
    assert sample["output"][1] == HINDUISM
    assert latency_sample(wice, tokenizer, 1, 2014, 3, "wice_claims")[1] == 1


def test_too_few_qualifying_is_an_error_naming_the_benchmark(wice, frank, tokenizer):
    with pytest.raises(
        FactlabError, match=r"wice_claims: check.latency asks for 2 examples and 1 qualify \(a source of 1800-2200 word pieces"
    ):
        latency_sample(wice, tokenizer, 2, 2000, 3, "wice_claims")
    # FRANK's articles here have 208-1,033 pieces: none of 1,800-2,200
    with pytest.raises(FactlabError, match=r"frank: check.latency asks for 1 examples and 0 qualify \(a source of 1800-2200"):
        latency_sample(frank, tokenizer, 1, 2000, 3, "frank")


def test_sample_without_context_cuts_outputs(frank, tokenizer):
    # 800 ± 10% = 720-880: two CNN/DM articles, 795 and 784 pieces, with 3 summaries each of 3 or more sentences.
    sample, qualifying = latency_sample(frank, tokenizer, 4, 800, 3, "frank")
    article = "frank-ed8674cc15b29a87d8df8de1efee353d71122272"
    assert qualifying == 6
    assert list(sample["id"]) == [
        f"{article}-bart",
        f"{article}-bert_sum",
        f"{article}-bus",
        "frank-9b5117ce299e1ae21141809563adcfb5308a0c97-bart",
    ]
    assert list(sample["source_tokens"]) == [795, 795, 795, 784]


def test_pairs_alignscore_forms_for_the_sample(wice, tokenizer):
    sample, _ = latency_sample(wice, tokenizer, 2, 1995, 3, "wice_claims")
    # dev00764's page: 1,013 words in 32 sentences -> 1013 // 350 + 1 = 3 chunks asked, 32 // 3 = 10 sentences each:
    # 10 + 10 + 10 + 2 = 4 chunks; dev04076's: 1,280 words, 53 sentences -> 4 asked, 13 each: 4 x 13 + 1 = 5 chunks.
    # Three output sentences each: (4 + 5) x 3 pairs.
    assert alignscore_pair_count(sample, CheckerSettings()) == (9, 27)
    assert alignscore_pair_count(sample, CheckerSettings(words_per_chunk=100_000)) == (2, 6)  # one chunk a page


def test_cpu_record_from_a_real_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(EPYC_CPUINFO)
    assert cpu_record(cpuinfo) == {
        "cpu": "AMD EPYC",
        "cpu_instruction_sets": {"avx2": True, "avx512f": True, "avx512_bf16": True, "amx_bf16": False, "amx_tile": False},
    }
    assert tuple(cpu_record(cpuinfo)["cpu_instruction_sets"]) == INSTRUCTION_SETS


def test_cpu_record_without_cpuinfo(tmp_path):
    record = cpu_record(tmp_path / "absent")
    assert record["cpu"] == (platform.processor() or platform.machine())
    assert not any(record["cpu_instruction_sets"].values())
