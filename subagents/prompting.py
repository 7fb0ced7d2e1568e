"""Prompts live as text files in `prompts/<variant>/<name>.txt` (installed as `research_prompts`).

Templates use `${name}` placeholders; a missing variable is an error. Every rendered prompt
carries its file's content hash so runs record exactly which prompt text they used.
A variant is a folder name in `prompts/`, or a path to a folder of one's own; it may hold only
some files: the rest come from `default`.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

DEFAULT_VARIANT = "default"
JUDGE_PROMPTS = "judge"  # the comparison judge's prompts: a folder in prompts/, not a research variant
RESERVED = frozenset({JUDGE_PROMPTS})
VARIANT_EXTRA_FILES = frozenset({"README.md"})  # a variant folder may document itself


class PromptError(ValueError):
    """Unknown variant, missing prompt file, or a template variable left unfilled."""


@dataclass(frozen=True)
class Prompt:
    variant: str
    name: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, **values: object) -> str:
        try:
            return string.Template(self.text).substitute({k: str(v) for k, v in values.items()})
        except KeyError as e:
            raise PromptError(f"prompt {self.variant}/{self.name}: missing variable {e.args[0]!r}") from None
        except ValueError as e:
            raise PromptError(f"prompt {self.variant}/{self.name}: {e}") from None


def prompts_root() -> Path:
    return Path(str(resources.files("research_prompts")))


def variants() -> list[str]:
    root = prompts_root()
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(("_", ".")) and p.name not in RESERVED)


def prompt_names(root: Path | None = None) -> list[str]:
    """The prompts a variant may override: the files of `default`."""
    return sorted(p.stem for p in ((root or prompts_root()) / DEFAULT_VARIANT).glob("*.txt"))


def placeholders(text: str) -> set[str]:
    """The ${name} variables a template uses."""
    return set(string.Template(text).get_identifiers())


def variant_problems(folder: Path, root: Path | None = None) -> list[str]:
    """What is wrong with a variant folder: a file that is no known prompt, or a placeholder the code
    never fills (the code fills exactly the variables the `default` prompt of the same name uses)."""
    base = (root or prompts_root()) / DEFAULT_VARIANT
    known = set(prompt_names(root))
    problems = []
    for f in sorted(folder.iterdir()):
        if f.name.startswith(".") or f.name in VARIANT_EXTRA_FILES:
            continue
        if f.suffix != ".txt" or f.stem not in known or not f.is_file():
            problems.append(f"{f.name} is not a known prompt (known: {', '.join(sorted(known))})")
            continue
        try:
            text = f.read_text(encoding="utf-8")
            ours = placeholders(text)
            if not string.Template(text).is_valid():
                raise ValueError("a $ that is not ${name} (write $$ for a dollar sign)")
        except (UnicodeDecodeError, ValueError) as e:
            problems.append(f"{f.name}: {e}")
            continue
        unfilled = sorted(ours - placeholders((base / f.name).read_text(encoding="utf-8")))
        if unfilled:
            problems.append(f"{f.name} uses placeholder(s) the code never fills: "
                            + ", ".join("${" + u + "}" for u in unfilled))
    return problems


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class PromptSet:
    """The prompts of one variant, with fallback to `default`; remembers what was used."""

    def __init__(self, variant: str = DEFAULT_VARIANT, root: Path | None = None, *,
                 allow_reserved: bool = False) -> None:
        self.root = root or prompts_root()
        if variant in RESERVED and not allow_reserved:
            raise PromptError(f"prompts/{variant}/ holds the {variant}'s prompts, not a research variant")
        self.variant, self.folder = self._locate(variant)
        self.used: dict[str, Prompt] = {}

    def _locate(self, variant: str) -> tuple[str, Path]:
        if _NAME.fullmatch(variant) and ".." not in variant and (self.root / variant).is_dir():
            return variant, self.root / variant
        path = Path(variant).expanduser()
        if ("/" in variant or variant.startswith((".", "~"))) and path.is_dir():
            return str(path), path
        known = ", ".join(variants()) if self.root == prompts_root() else ""
        raise PromptError(f"unknown prompt variant {variant!r}" + (f" (known: {known})" if known else "")
                          + "; give a folder name in prompts/ or a path to a folder")

    def get(self, name: str) -> Prompt:
        for label, folder in ((self.variant, self.folder), (DEFAULT_VARIANT, self.root / DEFAULT_VARIANT)):
            path = folder / f"{name}.txt"
            if path.is_file():
                p = Prompt(label, name, path.read_text(encoding="utf-8"))
                self.used[name] = p
                return p
        raise PromptError(f"prompt {name!r} not found in variant {self.variant!r} or default")

    def render(self, name: str, **values: object) -> str:
        return self.get(name).render(**values)

    def manifest(self) -> dict[str, dict[str, str]]:
        return {n: {"variant": p.variant, "sha256": p.sha256} for n, p in sorted(self.used.items())}
