"""An experiment: variants × questions × repeats, and the comparison directory it lives in.

    <runs-dir>/compare-<UTC yyyymmdd-hhmmss>-<4 hex>/
      experiment.json   what is compared: variants, questions, repeats, run options (no secrets)
      cells.jsonl       one line per cell start / end (status, run, error, seconds, cost), appended
      runs/<run_id>/    every cell's ordinary run directory (`research show` works on each)
      web/              the shared web cache: the first cell to need a search or page records it,
                        every later cell (any variant) replays it
      judge/            the judge's transcripts (agents/<judge id>.jsonl) and judgments.jsonl
      results.jsonl     one row per run: variant, question, repeat, every metric
      summary.md        the tables and verdicts
      report.html       one self-contained page

An experiment is built from command-line flags or an experiment file (TOML; flags win), checked
completely before anything is written (`UsageError`), and saved so `--resume` can finish it.
"""

from __future__ import annotations

import json
import math
import secrets
import time
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..rundir import write_json
from ..settings import UsageError
from .questions import Question, QuestionError, QuestionSet, load_set, select
from .variants import Variant, check_variants, from_table, parse_spec

EXPERIMENT = "experiment.json"
CELLS = "cells.jsonl"
RESULTS = "results.jsonl"
SUMMARY = "summary.md"
REPORT_HTML = "report.html"

# run options an experiment passes to every cell (flags of `research run` of the same name)
RUN_OPTIONS = ("corpus", "web", "lead_model", "subagent_model", "provider", "base_url", "requests_per_minute",
               "tokens_per_minute", "max_subagents", "max_rounds", "concurrency", "cache_dir", "allow_private_network")
FILE_KEYS = {"questions", "split", "tags", "ids", "limit", "repeats", "parallel", "max_cost", "judge_model",
             "runs_dir", "variant", *RUN_OPTIONS}


@dataclass(frozen=True)
class Cell:
    variant: str
    question_id: str
    repeat: int

    @property
    def key(self) -> str:
        return f"{self.variant}/{self.question_id}/{self.repeat}"


@dataclass(frozen=True)
class Experiment:
    id: str
    variants: tuple[Variant, ...]
    questions: tuple[Question, ...]
    question_set: str
    repeats: int = 1
    parallel: int = 4
    max_cost: float | None = None
    judge_model: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)  # run options for every cell
    notes: tuple[str, ...] = ()

    def cells(self) -> Iterator[Cell]:
        """Repeat by repeat, question by question, variant by variant: the variants of a question run
        close together in time (same load, same cache state)."""
        for r in range(1, self.repeats + 1):
            for q in self.questions:
                for v in self.variants:
                    yield Cell(v.name, q.id, r)

    def question(self, qid: str) -> Question:
        return next(q for q in self.questions if q.id == qid)

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "question_set": self.question_set, "repeats": self.repeats, "parallel": self.parallel,
                "max_cost": self.max_cost, "judge_model": self.judge_model, "options": dict(self.options),
                "notes": list(self.notes), "variants": [v.to_json() for v in self.variants],
                "questions": [q.to_json() for q in self.questions]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Experiment":
        return cls(d["id"], tuple(Variant.from_json(v) for v in d["variants"]),
                   tuple(Question.from_json(q) for q in d["questions"]), d["question_set"], d["repeats"],
                   d["parallel"], d.get("max_cost"), d.get("judge_model"), dict(d.get("options") or {}),
                   tuple(d.get("notes") or ()))


def new_experiment_id() -> str:
    return f"compare-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


# ---------------------------------------------------------------- building one from flags / a file


def read_experiment_file(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8-sig"))  # a byte order mark is not TOML
    except FileNotFoundError:
        raise UsageError(f"experiment file not found: {path}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"cannot read experiment file {path}: {e}") from None
    unknown = sorted(set(data) - FILE_KEYS)
    if unknown:
        raise UsageError(f"experiment file {path}: unknown key(s) {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(FILE_KEYS))})")
    tables = data.get("variant", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise UsageError(f"experiment file {path}: variants are [[variant]] tables")
    base = Path(path).resolve().parent
    q = data.get("questions")
    if isinstance(q, str) and q.endswith(".jsonl") and not Path(q).is_absolute():
        data["questions"] = str(base / q)  # relative to the file, like the prompt folders
    for t in tables:  # relative prompt folders are relative to the file
        ref = t.get("prompts", t.get("name"))
        if isinstance(ref, str) and ("/" in ref or ref.startswith(".")):
            t["prompts"] = str((base / ref).resolve())
    return data


def _int(values: Mapping[str, Any], key: str, default: int, flag: str) -> int:
    v = values.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise UsageError(f"{flag} must be a whole number of at least 1 (got {v!r})")
    return v


def _questions(values: Mapping[str, Any]) -> tuple[QuestionSet, list[Question]]:
    ref = values.get("questions")
    if not ref:
        raise UsageError("give the questions: --questions FILE.jsonl or a built-in set (python-docs, "
                         "postgresql-docs, r-docs, deep-research-bench, fanoutqa)")
    try:
        qset = load_set(str(ref))
        tags = values.get("tags") or []
        ids = values.get("ids") or []
        limit = values.get("limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise UsageError(f"--limit must be at least 1 (got {limit!r})")
        return qset, select(qset.questions, split=values.get("split"), tags=list(tags), ids=list(ids), limit=limit)
    except QuestionError as e:
        raise UsageError(str(e)) from None


def build_experiment(values: Mapping[str, Any], variant_specs: list[str]) -> Experiment:
    """Flags and file values merged (flags win) into a checked experiment. Raises UsageError."""
    tables = values.get("variant") or []
    variants = [from_table(t, f"[[variant]] {i + 1}") for i, t in enumerate(tables)]
    variants += [parse_spec(s) for s in variant_specs]
    check_variants(variants)
    repeats = _int(values, "repeats", 1, "--repeats")
    parallel = _int(values, "parallel", 4, "--parallel")
    max_cost = values.get("max_cost")
    if max_cost is not None and (isinstance(max_cost, bool) or not isinstance(max_cost, (int, float))
                                 or not math.isfinite(max_cost) or max_cost <= 0):
        raise UsageError(f"--max-cost must be a positive amount of USD (got {max_cost!r})")
    qset, questions = _questions(values)
    options = {k: values[k] for k in RUN_OPTIONS if values.get(k) not in (None, [], ())}
    if not options.get("corpus") and not options.get("web"):
        if qset.corpus:
            missing = [str(p) for p in qset.corpus if not p.is_dir()]
            if missing:
                raise UsageError(f"the {qset.name} set is written for the corpus at {missing[0]}, which is missing "
                                 "(apt-get install python3-doc / postgresql-doc-15, or give --corpus)")
            options["corpus"] = [str(p) for p in qset.corpus]
        elif qset.needs_web:
            raise UsageError(f"the {qset.name} questions need the web: add --web")
    if isinstance(options.get("corpus"), (str, Path)):
        options["corpus"] = [options["corpus"]]
    options = {k: ([str(Path(c).expanduser().resolve()) for c in v] if k == "corpus" else
                   str(v) if k == "cache_dir" else v) for k, v in options.items()}
    judge = values.get("judge_model")
    if judge is not None and (not isinstance(judge, str) or not judge.strip()):
        raise UsageError("--judge-model must be a model name")
    return Experiment(new_experiment_id(), tuple(variants), tuple(questions), qset.name, repeats, parallel,
                      float(max_cost) if max_cost is not None else None, judge, options, qset.notes)


# ---------------------------------------------------------------- the directory


@dataclass(frozen=True)
class ExperimentDir:
    path: Path

    @property
    def runs(self) -> Path:
        return self.path / "runs"

    @property
    def web(self) -> Path:
        return self.path / "web"

    @property
    def judge(self) -> Path:
        return self.path / "judge"

    def create(self, exp: Experiment) -> None:
        try:
            self.runs.mkdir(parents=True, exist_ok=False)
        except OSError as e:
            raise UsageError(f"cannot create the comparison directory {self.path}: {e}") from None
        write_json(self.path / EXPERIMENT, exp.to_json())

    def save(self, exp: Experiment) -> None:
        """Write experiment.json again when the experiment changed (settings given on --resume)."""
        f = self.path / EXPERIMENT
        try:
            same = json.loads(f.read_text(encoding="utf-8")) == json.loads(json.dumps(exp.to_json()))
        except (OSError, ValueError):
            same = False
        if not same:
            write_json(f, exp.to_json())

    def load(self) -> Experiment:
        f = self.path / EXPERIMENT
        if not f.is_file():
            raise UsageError(f"not a comparison directory (no {EXPERIMENT}): {self.path}")
        try:
            return Experiment.from_json(json.loads(f.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError) as e:
            raise UsageError(f"cannot read {f}: {type(e).__name__}: {e}") from None

    def log_cell(self, record: Mapping[str, Any]) -> None:
        """Append one cell event (flushed at once; a crash loses at most this line)."""
        line = {**record, "at": round(time.time(), 3)}  # wall clock: when the cell started / ended
        with open(self.path / CELLS, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
            fh.flush()

    def cell_log(self) -> list[dict[str, Any]]:
        f = self.path / CELLS
        if not f.is_file():
            return []
        out = []
        for raw in f.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(raw))
            except json.JSONDecodeError:
                continue  # a torn last line
        return out
