"""The citation check: supported, unsupported and unknown markers."""

from __future__ import annotations

from lead_agent.citations import check_citations, support_score
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
