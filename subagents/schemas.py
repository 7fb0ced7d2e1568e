"""Typed delegations (what a subagent is asked to do) and findings (what it returns).

Both are pydantic models: their JSON schema is what a language model sees as a tool's input,
and validation errors come back to the model as readable tool errors.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Boundaries(BaseModel):
    model_config = ConfigDict(extra="forbid")
    out_of_scope: list[str] = Field(default_factory=list, description="Topics the subagent must not pursue.")
    trusted_sources: list[str] = Field(default_factory=list, description="Sources or domains to prefer.")
    avoid_sources: list[str] = Field(default_factory=list, description="Sources or domains not to use or cite.")


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_tool_calls: int = Field(8, ge=1, le=100, description="Tool calls the subagent may make in total.")
    max_tokens: int = Field(60_000, ge=1_000, le=2_000_000, description="Model tokens (input+output) it may spend.")
    max_seconds: float = Field(90.0, gt=0, le=3600, description="Wall-clock time limit.")


class Delegation(BaseModel):
    """One task for one subagent."""

    model_config = ConfigDict(extra="forbid")
    objective: str = Field(min_length=3, description="What to find out, as a precise question or goal.")
    output_format: str = Field(
        "Up to 8 claims, each one or two sentences quoted or closely paraphrased from a source, with its source ids.",
        description="What the findings should look like.",
    )
    tools: list[str] = Field(min_length=1, description="Names of the tools this subagent may use.")
    boundaries: Boundaries = Field(default_factory=Boundaries)
    budget: Budget = Field(default_factory=Budget)
    queries: list[str] = Field(default_factory=list, description="Optional starting search queries.")

    @field_validator("objective")
    @classmethod
    def _objective_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("objective is blank")
        return v.strip()


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, description="One self-contained statement.")
    source_ids: list[str] = Field(min_length=1, description="Ids (S1, S2, …) of the retrieved sources that support it.")


class Findings(BaseModel):
    """What a subagent returns: condensed claims with their sources."""

    model_config = ConfigDict(extra="forbid")
    status: Literal["ok", "partial", "failed"] = Field(description="ok: objective answered; partial: some of it; failed: none.")
    summary: str = Field("", description="Two or three sentences answering the objective.")
    claims: list[Claim] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list, description="What remains unanswered.")
