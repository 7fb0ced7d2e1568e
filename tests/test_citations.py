"""The citation check: supported, unsupported and unknown markers."""

from __future__ import annotations

from lead_agent.citations import SUPPORT_THRESHOLD, check_citations, support_score
from subagents.sources import SourceRegistry


def registry() -> SourceRegistry:
    reg = SourceRegistry()
    reg.register(key="a", kind="corpus", title="Task groups", locator="lib/asyncio-task.html#3",
                 text="The first time any of the tasks belonging to the group fails with an exception other than "
                      "asyncio.CancelledError, the remaining tasks in the group are cancelled.")
    reg.register(key="b", kind="corpus", title="gather", locator="lib/asyncio-task.html#9",
                 text="If return_exceptions is False (default), the first raised exception is immediately "
                      "propagated to the task that awaits on gather().")
    return reg


def test_supported_citations_are_renumbered_with_references() -> None:
    draft = ("# Report\n\nWhen one task fails, the remaining tasks in the group are cancelled [S1]. "
             "With gather, the first raised exception is propagated to the awaiting task [S2].\n")
    report, check = check_citations(draft, registry())
    assert check.markers == 2 and check.supported == 2 and check.pass_rate == 1.0
    assert "are cancelled [1]." in report and "awaiting task [2]." in report
    assert "## References" in report and "1. Task groups — `lib/asyncio-task.html#3` (S1)" in report
    assert "## Citation check" not in report


def test_unsupported_citation_is_removed_and_listed() -> None:
    draft = "The moon is made of green cheese, according to astronomers [S1].\n"
    report, check = check_citations(draft, registry())
    assert check.unsupported == 1 and check.supported == 0 and check.pass_rate == 0.0
    assert "[S1]" not in report.split("## Citation check")[0] and "[1]" not in report
    assert "## Citation check" in report and "support 0.00" in report


def test_unknown_source_id_is_removed_and_listed() -> None:
    draft = "The remaining tasks in the group are cancelled [S1, S42].\n"
    report, check = check_citations(draft, registry())
    assert check.markers == 2 and check.supported == 1 and check.unknown == 1
    assert "cancelled [1]." in report and "S42 (no such source in this run)" in report
    assert check.to_dict()["removed"] == 1


def test_marker_after_full_stop_belongs_to_the_sentence_before() -> None:
    draft = "The remaining tasks in the group are cancelled. [S1] The moon is cheese. [S2]\n"
    report, check = check_citations(draft, registry())
    assert check.supported == 1 and check.unsupported == 1


def test_support_score_is_lexical_overlap() -> None:
    src = registry().get("S1").text
    assert support_score("remaining tasks in the group are cancelled", src) == 1.0
    assert support_score("Bananas are yellow fruit", src) == 0.0


def test_markers_inside_code_are_code_not_citations() -> None:
    draft = ("Index with `row[S1]` here. The remaining tasks in the group are cancelled [S1].\n"
             "```\nvalue = table[S2]\n    other = table[S9]\n```\n")
    report, check = check_citations(draft, registry())
    assert check.markers == 1 and check.supported == 1 and not check.issues
    assert "Index with `row[S1]` here. The remaining tasks in the group are cancelled [1]." in report
    assert "```\nvalue = table[S2]\n    other = table[S9]\n```\n" in report


def test_space_separated_and_range_markers_are_checked_not_left_verbatim() -> None:
    draft = ("The remaining tasks in the group are cancelled [S1 S2].\n"
             "The remaining tasks in the group are cancelled [S1–S3].\n")
    report, check = check_citations(draft, registry())
    assert check.markers == 5 and check.supported == 2 and check.unsupported == 2 and check.unknown == 1
    body = report.split("## References")[0]
    assert "[S" not in body and body.count("cancelled [1].") == 2


# Close paraphrase: real reports restate their sources. Each sentence's score is asserted too, so a
# threshold moved far either way (to 0.3 or to 0.95) fails here.
PARAPHRASES = [
    ("As soon as one task in the group fails, the other remaining tasks get cancelled [S1].", "S1"),
    ("When a task of the group fails with an exception, asyncio cancels the remaining tasks automatically [S1].", "S1"),
    ("By default gather propagates the first exception raised straight to the awaiting task [S2].", "S2"),
    ("Unless return_exceptions is set, the first exception raised goes immediately to whoever awaits gather() [S2].",
     "S2"),
]
# Sentences that share the source's words but claim something it does not say.
NOT_SAID = [
    ("If a task fails, the group retries it three times before giving up on the remaining work [S1].", "S1"),
    ("Tasks in a group share one event loop and run until the slowest finishes [S1].", "S1"),
]


def test_close_paraphrase_is_supported() -> None:
    reg = registry()
    for sentence, sid in PARAPHRASES:
        assert 0.6 <= support_score(sentence, reg.get(sid).text) <= 0.9, sentence
    report, check = check_citations("\n".join(s for s, _ in PARAPHRASES) + "\n", reg)
    assert (check.markers, check.supported, check.pass_rate) == (4, 4, 1.0) and not check.issues
    assert report.count("[1]") == 2 and report.count("[2]") == 2 and "## Citation check" not in report


def test_a_sentence_sharing_words_but_not_the_claim_is_unsupported() -> None:
    reg = registry()
    scores = [support_score(s, reg.get(sid).text) for s, sid in NOT_SAID]
    assert 0.35 <= scores[0] < 0.5 and 0.2 <= scores[1] < 0.35
    report, check = check_citations("\n".join(s for s, _ in NOT_SAID) + "\n", reg)
    assert check.unsupported == 2 and check.supported == 0 and "## References" not in report
    assert [i.support for i in check.issues] == [round(s, 3) for s in scores]
    assert f"support {scores[0]:.2f}" in report


def test_support_exactly_at_the_threshold_passes() -> None:
    reg = SourceRegistry()
    reg.register(key="k", kind="corpus", title="t", locator="l", text="Lanterns glow.")
    assert support_score("Lanterns flicker [S1].", "Lanterns glow.") == SUPPORT_THRESHOLD == 0.5
    _, check = check_citations("Lanterns flicker [S1].\n", reg)
    assert check.supported == 1


GOLDEN_DRAFT = """# Report

When one task fails, the remaining tasks in the group are cancelled [S1, S3, S1]. With gather, the first raised \
exception is propagated to the awaiting task [S2] .
The moon is made of green cheese [S1]. Unknown sources are dropped [S7].

The remaining tasks in the group are cancelled [S1-S2; S3-S3]. A runaway range [S1–S40] is cut to its ends; a \
reversed one [S3-S1] too.
Marker after the stop. [S2] Then a code span `x[S9]` stays.
```
table[S3]
```
This unsupported sentence goes on and on about orbital mechanics, tides, lunar libration, the Roche limit and much \
more besides, well past the length that the check section quotes [S2].
"""

GOLDEN_REPORT = """# Report

When one task fails, the remaining tasks in the group are cancelled [1][2]. With gather, the first raised \
exception is propagated to the awaiting task [3].
The moon is made of green cheese. Unknown sources are dropped.

The remaining tasks in the group are cancelled [1][2]. A runaway range is cut to its ends; a reversed one too.
Marker after the stop. Then a code span `x[S9]` stays.
```
table[S3]
```
This unsupported sentence goes on and on about orbital mechanics, tides, lunar libration, the Roche limit and much \
more besides, well past the length that the check section quotes.

## References

1. Task groups — `lib/asyncio-task.html#3` (S1)
2. note:copy — `note:copy` (S3)
3. gather — `lib/asyncio-task.html#9` (S2)

## Citation check

9 of 15 citations were removed because the cited source was not retrieved in this run or does not support the \
sentence:

- S1 (support 0.00): “The moon is made of green cheese.”
- S7 (no such source in this run): “Unknown sources are dropped.”
- S2 (support 0.25): “The remaining tasks in the group are cancelled.”
- S1 (support 0.00): “A runaway range is cut to its ends; a reversed one too.”
- S40 (no such source in this run): “A runaway range is cut to its ends; a reversed one too.”
- S3 (support 0.00): “A runaway range is cut to its ends; a reversed one too.”
- S1 (support 0.00): “A runaway range is cut to its ends; a reversed one too.”
- S2 (support 0.00): “Marker after the stop.”
- S2 (support 0.00): “This unsupported sentence goes on and on about orbital mechanics, tides, lunar libration, the Roche \
limit and much more besides, well past the length that the c”
"""


def test_the_checked_report_exactly() -> None:
    """Every rule at once, compared whole: renumbering by first use, duplicates once, ranges expanded (a
    runaway or reversed range cut to its two ends), unknown and unsupported markers removed and listed,
    markers after a full stop, code left alone, spaces before punctuation closed, a source without
    title or locator referenced by its key, quoted sentences cut at 160 characters."""
    reg = registry()
    reg.register(key="note:copy", kind="corpus", title="", locator="", text=reg.get("S1").text)
    report, check = check_citations(GOLDEN_DRAFT, reg)
    assert report == GOLDEN_REPORT
    d = check.to_dict()
    assert (d["markers"], d["supported"], d["unsupported"], d["unknown"], d["removed"], d["pass_rate"]) == \
        (15, 6, 7, 2, 9, 0.4)
    assert d["cited_sources"] == ["S1", "S3", "S2"]
    assert [(i["source_id"], i["reason"], i["support"]) for i in d["issues"]] == [
        ("S1", "unsupported", 0.0), ("S7", "unknown", None), ("S2", "unsupported", 0.25), ("S1", "unsupported", 0.0),
        ("S40", "unknown", None), ("S3", "unsupported", 0.0), ("S1", "unsupported", 0.0), ("S2", "unsupported", 0.0),
        ("S2", "unsupported", 0.0)]
    assert d["issues"][0]["sentence"] == "The moon is made of green cheese."


def test_ranges_at_the_cap_and_a_sentence_with_nothing_to_check() -> None:
    from lead_agent.citations import MAX_RANGE, _marker_ids

    assert _marker_ids(f"S1-S{MAX_RANGE}") == [f"S{n}" for n in range(1, MAX_RANGE + 1)]
    assert _marker_ids(f"S1-S{MAX_RANGE + 1}") == ["S1", f"S{MAX_RANGE + 1}"]
    assert _marker_ids("S4-S4, S2") == ["S4", "S2"]
    assert support_score("[S1]", "anything") == 1.0 and support_score("The, of.", "x") == 1.0
    assert check_citations("No markers at all.\n", registry())[1].to_dict()["pass_rate"] is None


def test_lines_without_markers_stay_as_written_and_odd_input_is_safe() -> None:
    reg = registry()
    draft = ("\nSpaces stay  as written , here .   \n"
             "Tasks `t` and \x001\x00 stay, and the remaining tasks in the group are cancelled [S8, S1].\n\n\n")
    report, check = check_citations(draft, reg)
    assert report.startswith("\nSpaces stay  as written , here .   \n")  # untouched: no marker on the line
    assert "Tasks `t` and \x001\x00 stay, and the remaining tasks in the group are cancelled [1].\n\n## References" in report
    assert (check.unknown, check.supported) == (1, 1)


def test_a_quoted_sentence_keeps_its_own_spacing_before_punctuation() -> None:
    """Only the space a marker leaves is closed: "the .INI file" and "the . operator" are quoted as written."""
    reg = SourceRegistry()
    reg.register(key="ini", kind="corpus", title="Launcher", locator="using/windows.html#7",
                 text="The same settings can be configured in the .INI file used by the launcher, "
                      "and an attribute is read with the . operator.")
    draft = ("The same settings can be configured in the .INI file used by the launcher [S1]. "
             "An attribute is read with the . operator [S1] [S9].\n")
    report, _ = check_citations(draft, reg)
    assert "configured in the .INI file used by the launcher [1]." in report
    assert "read with the . operator [1]." in report
