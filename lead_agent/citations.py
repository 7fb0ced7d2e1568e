"""Citation check: every `[S#]` marker in a draft must name a source retrieved in this run, and the
sentence carrying it must be supported by that source's retrieved text. Supported markers are
renumbered `[1]`, `[2]`, … in order of first use and a references list is appended; unknown and
unsupported ones are removed and listed in a "Citation check" section, never silently.

Support is lexical: the share of the sentence's content words (lower-cased, lightly stemmed,
stop words dropped) that occur in the source text must reach SUPPORT_THRESHOLD. That accepts
quotes and close paraphrase, and rejects a sentence about something the source never mentions.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from subagents.sources import SourceRegistry
from subagents.text import content_terms

from .references import reference_line

SUPPORT_THRESHOLD = 0.5
# [S1], [S1, S2], [S1; S2], [S1 S2] and ranges [S1-S3] / [S1–S3]
MARKER = re.compile(r"\[(S\d+(?:\s*(?:[,;\-–]\s*)?S\d+)*)\]")
MAX_RANGE = 20
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"``.+?``|`[^`]+`")  # code is quoted as is: `x[S1]` is not a citation


@dataclass
class CitationIssue:
    source_id: str
    reason: str  # "unknown" | "unsupported"
    sentence: str
    support: float | None = None


@dataclass
class CitationCheck:
    markers: int = 0
    supported: int = 0
    unsupported: int = 0
    unknown: int = 0
    issues: list[CitationIssue] = field(default_factory=list)
    cited_sources: list[str] = field(default_factory=list)

    @property
    def pass_rate(self) -> float | None:
        return None if self.markers == 0 else round(self.supported / self.markers, 4)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pass_rate"] = self.pass_rate
        d["removed"] = self.unsupported + self.unknown
        return d


def support_score(sentence: str, source_text: str) -> float:
    claim = content_terms(MARKER.sub(" ", sentence))
    if not claim:
        return 1.0  # nothing checkable (e.g. a bare heading); not a claim
    have = content_terms(source_text)
    return len(claim & have) / len(claim)


def _sentences(line: str) -> list[str]:
    """Split a line into sentences, keeping markers that follow a full stop with the sentence before."""
    pieces = SENTENCE_END.split(line)
    out: list[str] = []
    for piece in pieces:
        lead = re.match(rf"^(?P<markers>(?:{MARKER.pattern}\s*)+)(?P<rest>.*)$", piece)
        if lead and out:
            out[-1] = out[-1] + " " + lead.group("markers").strip()
            piece = lead.group("rest")
        if piece:
            out.append(piece)
    return out


def check_citations(draft: str, sources: SourceRegistry) -> tuple[str, CitationCheck]:
    """Return the checked report (renumbered markers, references, check section) and the counts."""
    check = CitationCheck()
    numbers: dict[str, int] = {}
    out_lines: list[str] = []
    in_fence = False
    for line in draft.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        spans: list[str] = []
        masked = CODE_SPAN.sub(lambda m: spans.append(m.group(0)) or f"\x00{len(spans) - 1}\x00", line)
        if in_fence or FENCE.match(line) or not MARKER.search(masked):
            out_lines.append(line)
            continue

        def unmask(text: str, spans: list[str] = spans) -> str:
            return re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))] if int(m.group(1)) < len(spans)
                          else m.group(0), text)

        new_sentences = []
        for masked_sentence in _sentences(masked):
            sentence = unmask(masked_sentence)

            def replace(m: re.Match[str], sentence: str = sentence) -> str:
                kept = []
                for sid in _marker_ids(m.group(1)):
                    check.markers += 1
                    src = sources.get(sid)
                    if src is None:
                        check.unknown += 1
                        check.issues.append(CitationIssue(sid, "unknown", _plain(sentence)))
                        continue
                    score = support_score(sentence, src.text)
                    if score < SUPPORT_THRESHOLD:
                        check.unsupported += 1
                        check.issues.append(CitationIssue(sid, "unsupported", _plain(sentence), round(score, 3)))
                        continue
                    check.supported += 1
                    if sid not in numbers:
                        numbers[sid] = len(numbers) + 1
                        check.cited_sources.append(sid)
                    kept.append(f"[{numbers[sid]}]")
                return "".join(dict.fromkeys(kept)) or _DROPPED

            # a marker dropped whole takes the space before it along ("text [S9]." -> "text."), a kept one the
            # space after it before punctuation ("[S2] ." -> "[3]."); other text keeps its spacing ("the .INI file")
            marked = re.sub(rf"[ \t]*{_DROPPED}", "", MARKER.sub(replace, masked_sentence))
            marked = re.sub(r"(\[\d+\])[ \t]+(?=[.!?,;:])", r"\1", marked)
            new_sentences.append(re.sub(r"[ \t]+(?=\s|$)", "", marked))
        out_lines.append(unmask(" ".join(s for s in new_sentences if s)))
    report = "\n".join(out_lines).rstrip() + "\n"
    if numbers:
        refs = ["", "## References", ""]
        for sid, n in numbers.items():
            src = sources.get(sid)
            assert src is not None
            refs.append(reference_line(n, src))
        report += "\n".join(refs) + "\n"
    if check.issues:
        lines = ["", "## Citation check", "",
                 f"{len(check.issues)} of {check.markers} citations were removed because the cited source "
                 "was not retrieved in this run or does not support the sentence:", ""]
        for issue in check.issues:
            why = "no such source in this run" if issue.reason == "unknown" else f"support {issue.support:.2f}"
            lines.append(f"- {issue.source_id} ({why}): “{issue.sentence[:160]}”")
        report += "\n".join(lines) + "\n"
    return report, check


_DROPPED = "\x01"  # where a marker whose every id was removed stood


def _marker_ids(inside: str) -> list[str]:
    """The ids a marker names, ranges expanded (capped: a runaway range is cited as its two ends)."""
    ids: list[str] = []
    for m in re.finditer(r"(S(\d+))(?:\s*[-–]\s*(S(\d+)))?", inside):
        if m.group(3) is None:
            ids.append(m.group(1))
            continue
        a, b = int(m.group(2)), int(m.group(4))
        ids += [f"S{n}" for n in range(a, b + 1)] if 0 <= b - a < MAX_RANGE else [m.group(1), m.group(3)]
    return ids


def _plain(sentence: str) -> str:
    return re.sub(r"\s+([.!?,;:])", r"\1", " ".join(MARKER.sub("", sentence).split()))
