"""`research run --approve`: the plan gate at a terminal.

The plan is shown as a table (on stderr, so stdout keeps only the report) and the person answers
on stdin: approve, edit or reject. Edit opens the plan as JSON in `$VISUAL` / `$EDITOR`; the edit
passes the same schema and policy checks as the lead's plan, and an invalid edit reopens with its
problems written into the file (`"_problems"`) and printed. End of input means "not now": the run
stops awaiting approval, to be continued with `research approve` or `research reject`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Callable

import trio

from subagents.delegation import Plan

from .approval import (MAX_EDITS, Defer, PlanEditError, PlanReview, Refuse, Verdict, plan_document,
                       plan_from_document, plan_table)

PROMPT = "Run this plan? [a]pprove, [e]dit, [r]eject: "


class TerminalReviewer:
    def __init__(self, *, editor: str, stdin: IO[str] | None = None, out: IO[str] | None = None,
                 neutralise: Callable[[str], str] = lambda s: s) -> None:
        self.editor = editor
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stderr
        self.neutralise = neutralise

    async def __call__(self, review: PlanReview) -> Verdict:
        return await trio.to_thread.run_sync(self.review, review, abandon_on_cancel=True)

    def say(self, text: str) -> None:
        print(self.neutralise(text), file=self.out, flush=True)

    def review(self, review: PlanReview) -> Verdict:
        plan = review.plan
        self.say("\n" + review.table())
        if review.note:
            self.say(f"(asked because: {review.reason.value}; {review.note})")
        if review.problems:
            self.say("The last edit was refused: " + "; ".join(review.problems))
        while True:
            self.out.write(PROMPT)
            self.out.flush()
            line = self.stdin.readline()
            if not line:
                self.say("\n(no answer: the run stops awaiting approval)")
                return Defer("no answer on standard input")
            answer = line.strip().lower()[:1]
            if answer == "a":
                return plan
            if answer == "r":
                return Refuse("rejected at the prompt")
            if answer == "e":
                edited = self.edit(review, plan)
                if edited is not None and edited != plan:
                    plan = edited
                    self.say("\n" + plan_table(plan, title="Edited plan"))
                continue
            self.say("Answer a (approve), e (edit) or r (reject).")

    def edit(self, review: PlanReview, plan: Plan) -> Plan | None:
        """Open the plan in the editor until it passes the checks (at most MAX_EDITS tries)."""
        with tempfile.TemporaryDirectory(prefix="research-plan-") as tmp:
            path = Path(tmp) / "plan.json"
            path.write_text(json.dumps(plan_document(plan), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            for _ in range(MAX_EDITS):
                try:
                    code = subprocess.call(shlex.split(self.editor) + [str(path)])
                except OSError as e:
                    self.say(f"cannot start the editor {self.editor!r}: {e}")
                    return None
                if code != 0:
                    self.say(f"the editor exited with status {code}; the plan is unchanged")
                    return None
                try:
                    return self.checked(review, path)
                except PlanEditError as e:
                    self.say("The edit is refused:\n" + "\n".join(f"  - {p}" for p in e.problems))
                    self.reopen_with(path, e.problems)
            self.say(f"no valid edit after {MAX_EDITS} tries; the plan is unchanged")
            return None

    @staticmethod
    def checked(review: PlanReview, path: Path) -> Plan:
        text = path.read_text(encoding="utf-8")
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise PlanEditError([f"the plan is not valid JSON: {e}"]) from None
        return review.check(plan_from_document(doc))

    @staticmethod
    def reopen_with(path: Path, problems: list[str]) -> None:
        """Write the problems into the document (when it parses) so the editor shows them."""
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return
        if isinstance(doc, dict):
            doc = {"_problems": problems, **{k: v for k, v in doc.items() if k != "_problems"}}
            path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
