"""Question sets: JSONL files with `question` and optional `answers`, `gold_sources`, `tags`, and the
built-in sets (the python-docs, PostgreSQL and R-manuals sets shipped in `data/`, the DeepResearch Bench
tasks, FanOutQA's dev set from the `fanoutqa` package).

In `answers` the entries are alternatives; inside one entry "; " separates parts a complete answer
must all contain (see data/README.md). Every mistake in a file is a `QuestionError` naming the line.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..terminal import question_problem

PYTHON_DOCS_ROOT = Path("/usr/share/doc/python3.11/html")
POSTGRESQL_DOCS_ROOT = Path("/usr/share/doc/postgresql-doc-15/html")
R_MANUALS_ROOT = Path("/usr/share/R/doc/manual")  # Debian r-doc-pdf's PDFs


class QuestionError(ValueError):
    """An empty or malformed question set (the message names the file and line)."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...] = ()  # alternatives; "; " separates required parts within one
    gold_sources: tuple[str, ...] = ()  # paths relative to the corpus root, or URLs
    tags: tuple[str, ...] = ()
    split: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Question":
        return cls(str(d["id"]), d["question"], tuple(d.get("answers") or ()), tuple(d.get("gold_sources") or ()),
                   tuple(d.get("tags") or ()), d.get("split"))


@dataclass(frozen=True)
class QuestionSet:
    name: str
    questions: tuple[Question, ...]
    corpus: tuple[Path, ...] = ()  # the corpus a built-in set is written for
    needs_web: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def _strings(value: Any, what: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise QuestionError(f"{where}: {what} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def parse_line(raw: str, where: str, n: int) -> Question:
    try:
        d = json.loads(raw)
    except json.JSONDecodeError as e:
        at = e.msg if e.msg.endswith(" at") else f"{e.msg} at"
        raise QuestionError(f"{where}: not valid JSON ({at} column {e.colno})") from None
    if not isinstance(d, dict):
        raise QuestionError(f"{where}: expected a JSON object")
    q = d.get("question", d.get("prompt"))  # DeepResearch Bench calls it "prompt"
    if not isinstance(q, str) or not q.strip():
        raise QuestionError(f"{where}: \"question\" is missing or empty")
    problem = question_problem(q)  # the check every run makes, made here so the error names the file and line
    if problem:
        raise QuestionError(f"{where}: {problem}")
    split = d.get("split")
    if split is not None and not isinstance(split, str):
        raise QuestionError(f"{where}: split must be a string")
    qid = d.get("id", f"q{n:03d}")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or not str(qid).strip():
        raise QuestionError(f"{where}: id must be a non-empty string or a number")
    tags = _strings(d.get("tags"), "tags", where) or tuple(str(d[k]) for k in ("topic", "language") if d.get(k))
    return Question(str(qid).strip(), " ".join(q.split()), _strings(d.get("answers"), "answers", where),
                    _strings(d.get("gold_sources"), "gold_sources", where), tags, split)


def parse_questions(lines: Iterable[str], source: str) -> list[Question]:
    out: list[Question] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        q = parse_line(raw, f"{source} line {n}", len(out) + 1)
        if q.id in seen:
            raise QuestionError(f"{source} line {n}: id {q.id!r} already used on line {seen[q.id]}")
        seen[q.id] = n
        out.append(q)
    if not out:
        raise QuestionError(f"{source}: no questions in the file")
    return out


def load_file(path: Path) -> list[Question]:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte order mark (Windows editors) is not a question
    except FileNotFoundError:
        raise QuestionError(f"question file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise QuestionError(f"cannot read question file {path}: {e}") from None
    return parse_questions(text.splitlines(), str(path))


# ---------------------------------------------------------------- built-in sets


def data_file(name: str) -> Path:
    return Path(str(resources.files("lead_agent.compare") / "data" / name))


def fanoutqa_questions() -> list[Question]:
    """FanOutQA's dev set (the `fanoutqa` package ships it; its questions need the web)."""
    try:
        import fanoutqa
    except ImportError:
        raise QuestionError("the FanOutQA set needs the fanoutqa package: pip install 'research-agents[fanoutqa]'") \
            from None
    return [fanout_question(q) for q in fanoutqa.load_dev()]


def _answer_parts(answer: Any) -> list[str]:
    if isinstance(answer, dict):
        return [p for v in answer.values() for p in _answer_parts(v)]
    if isinstance(answer, list):
        return [p for v in answer for p in _answer_parts(v)]
    if isinstance(answer, bool):
        return ["yes" if answer else "no"]
    return [str(answer).strip()] if str(answer).strip() else []


def _evidence_urls(subs: Sequence[Any]) -> list[str]:
    urls: list[str] = []
    for s in subs:
        if getattr(s, "evidence", None) is not None:
            urls.append(s.evidence.url)
        urls += _evidence_urls(getattr(s, "decomposition", []) or [])
    return list(dict.fromkeys(urls))


def fanout_question(q: Any) -> Question:
    """One fanoutqa DevQuestion: every part of its answer must be found (a dict's values, a list's items)."""
    parts = _answer_parts(q.answer)
    return Question(q.id, q.question, ("; ".join(parts),) if parts else (), tuple(_evidence_urls(q.decomposition)),
                    tuple(["fanoutqa", *q.categories]), "dev")


BUILTIN = {
    "python-docs": "python_docs.jsonl",
    "postgresql-docs": "postgresql_docs.jsonl",
    "r-docs": "r_docs.jsonl",
    "deep-research-bench": "deep_research_bench/query.jsonl",
    "fanoutqa": None,
}


def load_set(ref: str) -> QuestionSet:
    """A built-in set by name, or a JSONL file by path."""
    if ref == "python-docs":
        return QuestionSet(ref, tuple(load_file(data_file(BUILTIN[ref]))), (PYTHON_DOCS_ROOT,))
    if ref == "postgresql-docs":
        return QuestionSet(ref, tuple(load_file(data_file(BUILTIN[ref]))), (POSTGRESQL_DOCS_ROOT,))
    if ref == "r-docs":
        return QuestionSet(ref, tuple(load_file(data_file(BUILTIN[ref]))), (R_MANUALS_ROOT,))
    if ref == "deep-research-bench":
        qs = [Question(f"drb-{q.id}", q.question, tags=q.tags) for q in load_file(data_file(BUILTIN[ref]))]
        return QuestionSet(ref, tuple(qs), needs_web=True,
                           notes=("DeepResearch Bench tasks have no gold answers: judge them (--judge-model)",))
    if ref == "fanoutqa":
        return QuestionSet(ref, tuple(fanoutqa_questions()), needs_web=True)
    path = Path(ref).expanduser()
    if not path.exists() and "/" not in ref and not ref.endswith(".jsonl"):
        raise QuestionError(f"unknown question set {ref!r}: give a JSONL file or one of {', '.join(BUILTIN)}")
    return QuestionSet(path.name, tuple(load_file(path)))


def select(questions: Sequence[Question], *, split: str | None = None, tags: Sequence[str] = (),
           ids: Sequence[str] = (), limit: int | None = None) -> list[Question]:
    """Filter a set: by split, by tags (all must be present), by ids; then the first `limit`."""
    out = [q for q in questions if (split is None or q.split == split) and all(t in q.tags for t in tags)
           and (not ids or q.id in ids)]
    missing = sorted(set(ids) - {q.id for q in out})
    if missing:
        raise QuestionError(f"no question with id(s) {', '.join(missing)} in the selection")
    out = out[:limit] if limit is not None else out
    if not out:
        raise QuestionError("no question left after the selection (split / tags / limit)")
    return out
