"""Variants: what an experiment compares. A variant is a prompt folder (`prompts/<name>/`, which may
hold only the files it changes and inherits the rest from `default`, or a path to a folder) plus
optional settings: lead and subagent model, max subagents, rounds, mode.

    --variant default                       prompts/default, the experiment's settings
    --variant terse                         prompts/terse/ (only the files it changes)
    --variant ./my-prompts                  a folder of one's own (named after the folder)
    --variant single                        built in: default prompts, one agent, no delegation
    --variant terse:max_subagents=2,lead_model=claude-sonnet-4-5

In an experiment file: `[[variant]]` tables with `name` and optionally `prompts`, `mode`,
`lead_model`, `subagent_model`, `max_subagents`, `max_rounds`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from subagents.prompting import DEFAULT_VARIANT, PromptError, PromptSet, prompt_names, variant_problems, variants

from ..settings import RunMode, UsageError

SINGLE = "single"  # the built-in baseline variant
SETTINGS = ("mode", "lead_model", "subagent_model", "max_subagents", "max_rounds")


@dataclass(frozen=True)
class Variant:
    name: str
    prompts: str = DEFAULT_VARIANT  # a folder name in prompts/ or a path
    mode: RunMode = RunMode.MULTI
    lead_model: str | None = None  # None: the experiment's
    subagent_model: str | None = None
    max_subagents: int | None = None
    max_rounds: int | None = None

    def overrides(self) -> dict[str, Any]:
        """The run settings this variant sets (None: the experiment's own)."""
        return {k: getattr(self, k) for k in ("max_subagents", "max_rounds") if getattr(self, k) is not None} | {
            "prompts": self.prompts, "mode": self.mode}

    def describe(self) -> str:
        extra = [f"{k}={getattr(self, k)}" for k in SETTINGS if getattr(self, k) not in (None, RunMode.MULTI)]
        prompts = f"…/{Path(self.prompts).name}" if Path(self.prompts).is_absolute() else self.prompts
        return f"{self.name} (prompts {prompts}{', ' + ', '.join(extra) if extra else ''})"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["mode"] = self.mode.value
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Variant":
        return cls(**{**d, "mode": RunMode(d.get("mode", RunMode.MULTI.value))})


def _value(key: str, raw: Any, where: str) -> Any:
    if key in ("max_subagents", "max_rounds"):
        try:
            n = int(raw)
        except (TypeError, ValueError):
            raise UsageError(f"{where}: {key} must be a whole number (got {raw!r})") from None
        if n < 1 or isinstance(raw, bool) or (isinstance(raw, float) and raw != n):
            raise UsageError(f"{where}: {key} must be at least 1 (got {raw!r})")
        return n
    if key == "mode":
        try:
            return RunMode(raw)
        except ValueError:
            raise UsageError(f"{where}: unknown mode {raw!r} (known: {', '.join(m.value for m in RunMode)})") from None
    if not isinstance(raw, str) or not raw.strip():
        raise UsageError(f"{where}: {key} must be a model name")
    return raw.strip()


def _locate(ref: str, where: str) -> tuple[str, str]:
    """(name, prompts) for a variant reference: a prompts/ folder, a path, or the built-in `single`."""
    if ref == SINGLE and SINGLE not in variants():
        return SINGLE, DEFAULT_VARIANT
    try:
        prompts = PromptSet(ref)
    except PromptError:
        known = ", ".join([*variants(), SINGLE])
        raise UsageError(f"{where}: unknown variant {ref!r} (known: {known}; or a path to a prompt folder)") from None
    if prompts.variant in variants():  # a folder of prompts/, by name
        return prompts.variant, prompts.variant
    return prompts.folder.name, str(prompts.folder.resolve())  # a folder of one's own: absolute, for --resume


def check_prompts(variant: Variant) -> None:
    """A variant's prompt folder may hold only known prompts whose placeholders the code fills."""
    prompts = PromptSet(variant.prompts)
    if prompts.variant == DEFAULT_VARIANT:
        return
    problems = variant_problems(prompts.folder)
    if problems:
        raise UsageError(f"variant {variant.name!r}, prompt folder {prompts.folder}: {problems[0]}"
                         + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""))


def variant_from(ref: str, settings: Mapping[str, Any] | None = None, *, name: str | None = None,
                 where: str = "--variant") -> Variant:
    found_name, prompts = _locate(ref, where)
    values: dict[str, Any] = {"mode": RunMode.SINGLE} if ref == SINGLE and prompts == DEFAULT_VARIANT else {}
    for key, raw in (settings or {}).items():
        if key not in SETTINGS:
            raise UsageError(f"{where}: unknown variant setting {key!r} (known: {', '.join(SETTINGS)})")
        values[key] = _value(key, raw, where)
    v = Variant(name=name or found_name, prompts=prompts, **values)
    check_prompts(v)
    return v


def parse_spec(spec: str) -> Variant:
    """`NAME|PATH[:key=value,key=value]` from the command line."""
    ref, _, rest = spec.partition(":")
    if not ref.strip():
        raise UsageError(f"--variant {spec!r}: give a prompt variant name or folder")
    settings: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"--variant {spec!r}: settings are key=value (got {item!r})")
        settings[key.strip()] = value.strip()
    label = ref.strip() if not settings else f"{ref.strip()}[{','.join(f'{k}={v}' for k, v in settings.items())}]"
    v = variant_from(ref.strip(), settings, where=f"--variant {spec}")
    return v if not settings else Variant(**{**{f.name: getattr(v, f.name) for f in fields(v)},
                                            "name": Path(label).name if "/" in ref else label})


def from_table(table: Mapping[str, Any], where: str) -> Variant:
    """One `[[variant]]` table of an experiment file."""
    unknown = sorted(set(table) - {"name", "prompts", *SETTINGS})
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)} (known: name, prompts, {', '.join(SETTINGS)})")
    name = table.get("name")
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"{where}: every variant needs a name")
    ref = table.get("prompts", name)
    if not isinstance(ref, str):
        raise UsageError(f"{where}: prompts must be a folder name or path")
    return variant_from(ref, {k: table[k] for k in SETTINGS if k in table}, name=name.strip(), where=where)


def check_variants(vs: list[Variant]) -> None:
    if len(vs) < 2:
        raise UsageError("give at least two variants to compare (e.g. --variant default --variant single)")
    names = [v.name for v in vs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError(f"variant name(s) given twice: {', '.join(dup)} (name them in an experiment file)")


def prompt_hashes(variant: Variant) -> dict[str, str]:
    """The sha256 of every prompt the variant would use (its own files, else default's)."""
    ps = PromptSet(variant.prompts)
    return {n: ps.get(n).sha256 for n in prompt_names()}


def differences(vs: list[Variant], models: Mapping[str, tuple[str, str]]) -> dict[str, bool]:
    """Which aspects differ between the variants: prompts, mode, models, settings."""
    def differ(f: Any) -> bool:
        return len({repr(f(v)) for v in vs}) > 1

    return {"prompts": differ(prompt_hashes), "mode": differ(lambda v: v.mode),
            "models": differ(lambda v: models[v.name]),
            "settings": differ(lambda v: (v.max_subagents, v.max_rounds))}


def offline_note(vs: list[Variant], models: Mapping[str, tuple[str, str]], language: Mapping[str, bool]) -> str | None:
    """What to tell the user when no variant uses a language model: prompts change nothing offline."""
    if any(language.values()):
        return None
    d = differences(vs, models)
    if not d["prompts"]:
        return None
    other = [k for k in ("mode", "settings") if d[k]]
    head = ("Offline: every model here is the extractive model, which reads no prompts, so prompt variants "
            "cannot differ offline")
    if not other:
        return head + ("; these variants differ only in their prompts and will give the same runs. Give a "
                       "language model (--lead-model / --subagent-model, or a variant's lead_model) to compare prompts.")
    return head + f"; what differs here offline is the {' and '.join(other)} of the variants."
