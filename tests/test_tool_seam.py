"""The tool seam in detail: the allow-list is enforced in code, every failure is a readable
`is_error` result, schemas are what the model sees, and a terminal tool ends only on success."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, model_validator

from subagents.model import ToolSpec, ToolUseBlock
from subagents.sources import SourceRegistry
from subagents.tools import Tool, ToolContext, ToolError, Toolbox, format_validation_error


class Search(BaseModel):
    """Search arguments."""

    query: str = Field(min_length=1)
    k: int = Field(5, ge=1)


class Pair(BaseModel):
    a: int
    b: int

    @model_validator(mode="after")
    def _ordered(self) -> "Pair":
        if self.a > self.b:
            raise ValueError("a must not exceed b")
        return self


async def search(args: Search, ctx: ToolContext) -> str:
    if args.query == "tool-error":
        raise ToolError("the index is offline")
    if args.query == "bug":
        raise KeyError("oops")
    return f"{ctx.agent_id} searched {args.query} (k={args.k})"


async def pair(args: Pair, ctx: ToolContext) -> str:
    return "recorded"


def box() -> Toolbox:
    return Toolbox([Tool("search", "Search the notes.", Search, search),
                    Tool("submit", "Submit.", Pair, pair, terminal=True),
                    Tool("raw", "Raw schema.", Search, search, input_schema={"type": "object", "properties": {}})])


CTX = ToolContext("agent-7", SourceRegistry())


def use(name: str, **inp: object) -> ToolUseBlock:
    return ToolUseBlock("toolu_1", name, dict(inp))


def test_a_toolbox_knows_its_tools_by_name_and_refuses_duplicates() -> None:
    b = box()
    assert b.names() == ["search", "submit", "raw"]
    assert "search" in b and "delete" not in b and b.get("submit").terminal
    with pytest.raises(ValueError, match="duplicate tool name 'search'"):
        b.add(Tool("search", "again", Search, search))
    assert Toolbox().names() == []


def test_specs_are_the_schemas_the_model_sees() -> None:
    b = box()
    [spec] = b.specs(["search"])
    assert isinstance(spec, ToolSpec) and (spec.name, spec.description) == ("search", "Search the notes.")
    assert "title" not in spec.input_schema and spec.input_schema["required"] == ["query"]
    assert spec.input_schema["properties"]["k"] == {"default": 5, "minimum": 1, "title": "K", "type": "integer"}
    assert [s.name for s in b.specs()] == ["search", "submit", "raw"]
    assert [s.name for s in b.specs(["raw", "nope", "search"])] == ["raw", "search"]  # allowed order, unknown dropped
    assert b.specs([]) == []
    assert b.get("raw").spec().input_schema == {"type": "object", "properties": {}}  # the override as given


async def test_a_tool_outside_the_allow_list_is_refused_whatever_the_model_asks() -> None:
    out = await box().run(use("submit", a=1, b=2), ["search", "raw"], CTX)
    assert out.result.is_error and out.args is None and not out.terminal
    assert out.result.content == "Refused: tool 'submit' is not allowed for this agent. Allowed tools: raw, search."
    none = await box().run(use("search", query="x"), [], CTX)
    assert none.result.content.endswith("Allowed tools: (none).")
    unknown = await box().run(use("delete", path="/"), ["delete"], CTX)
    assert unknown.result.is_error and unknown.result.content == "Unknown tool 'delete'."


async def test_invalid_input_is_a_readable_error() -> None:
    out = await box().run(use("search", query="", k=0), ["search"], CTX)
    assert out.result.is_error and out.result.tool_use_id == "toolu_1"
    assert out.result.content == ("Invalid input for search: query: String should have at least 1 character; "
                                  "k: Input should be greater than or equal to 1")
    whole = await box().run(use("submit", a=3, b=1), ["submit"], CTX)
    assert whole.result.content == "Invalid input for submit: (input): Value error, a must not exceed b"
    assert not whole.terminal and whole.args is None


async def test_tool_failures_are_results_the_model_reads() -> None:
    err = await box().run(use("search", query="tool-error"), ["search"], CTX)
    assert err.result.is_error and err.result.content == "search failed: the index is offline"
    bug = await box().run(use("search", query="bug"), ["search"], CTX)
    assert bug.result.is_error and bug.result.content == "search failed unexpectedly: KeyError: 'oops'"


async def test_success_carries_the_validated_input_and_the_terminal_flag() -> None:
    ok = await box().run(use("search", query="trio"), ["search"], CTX)
    assert not ok.result.is_error and ok.result.content == "agent-7 searched trio (k=5)"
    assert ok.args == Search(query="trio") and not ok.terminal
    done = await box().run(use("submit", a=1, b=2), ["submit"], CTX)
    assert done.terminal and done.args == Pair(a=1, b=2) and done.result.content == "recorded"
    block = await box().call(use("submit", a=1, b=2), ["submit"], CTX)
    assert block == done.result


def test_format_validation_error_joins_every_problem() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        Search.model_validate({"k": "many"})
    assert format_validation_error(info.value) == "query: Field required; k: Input should be a valid integer, " \
                                                  "unable to parse string as an integer"


class Outer(BaseModel):
    inner: Search


async def test_nested_errors_name_the_path_and_results_answer_their_call() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        Outer.model_validate({"inner": {"query": ""}})
    assert format_validation_error(info.value) == "inner.query: String should have at least 1 character"
    b = box()
    ok = await b.run(ToolUseBlock("toolu_42", "search", {"query": "trio"}), ["search"], CTX)
    assert ok.result.tool_use_id == "toolu_42"
    block = await b.call(ToolUseBlock("toolu_43", "search", {"query": "trio"}), ["search"], ToolContext("b-9", CTX.sources))
    assert (block.tool_use_id, block.content) == ("toolu_43", "b-9 searched trio (k=5)")


def test_structured_material_is_indented_json_kept_in_its_own_script() -> None:
    from subagents.tools import untrusted

    assert untrusted("notes", {"title": "Café", "ids": [1]}) == (
        '<retrieved_material source="notes">\n{\n "title": "Café",\n "ids": [\n  1\n ]\n}\n</retrieved_material>')
