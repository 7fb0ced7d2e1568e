"""The two corpus tools an agent sees: `search_corpus` and `read_passage`.

Every passage shown to an agent is registered in the run's SourceRegistry under the key
"corpus:<passage_id>", so a snippet and its later full read share one source id. Reads are served
from SQLite in milliseconds and run directly in the async tool; a search embeds its query when the
corpus ranks by meaning (numpy, milliseconds to tens of them), so it runs in a worker thread behind
a limiter.
"""

from __future__ import annotations

import re
from typing import Any

import trio
from pydantic import BaseModel, Field

from ..sources import SourceKind
from ..tool_names import READ_PASSAGE, SEARCH_CORPUS
from ..tools import Tool, ToolContext, ToolError, untrusted
from .corpus import Corpus
from .query import Match, letter_names, name_runs, query_terms
from .records import CorpusError, NoSearchableWords, Passage


class SearchCorpusArgs(BaseModel):
    query: str = Field(min_length=1, description="Keywords or a natural-language question.")
    k: int = Field(default=8, ge=1, le=20, description="How many passages to return (1-20).")
    match: Match = Field(default=Match.ANY, description=(
        "any: passages with any of the query's words (more and rarer words rank higher); all: only passages "
        "with every word of the query, e.g. where two compared things are discussed together."))


class ReadPassageArgs(BaseModel):
    passage_id: str = Field(min_length=1, description="A passage_id returned by search_corpus (its source_id, "
                                                      "e.g. S4, works too).")


SEARCH_DESCRIPTION = (
    "Search the local document corpus (offline reference documentation): BM25 full-text search, "
    "fused with ranking by meaning when the corpus has an embedding model (then each result's "
    "`semantic` is its similarity in meaning to the query, -1 to 1, higher is closer). Returns the "
    "best-matching passages, each with a source_id to cite, a passage_id, the "
    "document title, the heading path and a ~300-character snippet, and how many of the corpus's "
    "passages contain each query term (a term no passage contains is not in the corpus) and how many "
    "have it in their title or headings (a term none has there is only mentioned in passing). When the "
    "documentation has an index, `index` lists the index entries the query asks for and the passages "
    "they point to (another wording of the same topic). Use it first for anything the "
    "local documents may cover; prefer specific words (names, identifiers, technical terms) over "
    "long sentences, and try other wordings when results are off-topic. Snippets are partial: call "
    "read_passage on a promising passage_id before relying on it."
)
READ_DESCRIPTION = (
    "Read one corpus passage in full, by a passage_id that search_corpus returned, together with "
    "the passages just before and after it in the same document (each with its own source_id). Use "
    "it to verify a snippet and to get the exact wording you will cite (cite the source_id of the "
    "passage the wording comes from)."
)


_KEY_PREFIX = "corpus:"
INDEX_ENTRIES = 3  # entries of the documentation's own index shown with a search
_SOURCE_ID = re.compile(r"S\d+")


def _listed(p: Passage, source_id: str, **extra: Any) -> dict[str, Any]:
    """A passage as a search lists it: ids, title, heading, snippet, and its similarity in meaning when ranked so."""
    out: dict[str, Any] = {"source_id": source_id, "passage_id": p.passage_id, "title": p.title,
                           "heading": p.heading, "snippet": p.snippet, **extra}
    if p.semantic is not None:
        out["semantic"] = round(p.semantic, 3)
    return out


def _passage_id(ref: str, ctx: ToolContext) -> str:
    """A passage id, or the source id (S4) a search result listed for a corpus passage."""
    src = ctx.sources.get(ref) if _SOURCE_ID.fullmatch(ref) else None
    if src is None:
        return ref
    if src.kind is not SourceKind.CORPUS or not src.key.startswith(_KEY_PREFIX):
        raise ToolError(f"{ref} is not a corpus passage (it is a {src.kind.value} source: {src.locator})")
    return src.key[len(_KEY_PREFIX):]


def _register_passage(ctx: ToolContext, p: Passage, text: str, root: str | None = None,
                      pages: tuple[int, ...] = ()) -> str:
    meta: dict[str, Any] = {"heading": p.heading, "path": p.path}
    if root:
        meta["root"] = root  # the corpus root's real path: reports link file://<root>/<path>
    if pages:
        meta["page"] = pages[0]  # a PDF's page: reports link file://<root>/<path>#page=N
        meta["pages"] = list(pages)  # every page the passage is on
    src = ctx.sources.register(
        key=f"corpus:{p.passage_id}",
        kind=SourceKind.CORPUS,
        title=p.title,
        locator=p.passage_id,
        text=text,
        agent_id=ctx.agent_id,
        meta=meta,
    )
    return src.id


SEARCH_THREADS = 2  # searches embedding their queries at once (the machine's cores)


def make_corpus_tools(corpus: Corpus) -> list[Tool]:
    limiter = trio.CapacityLimiter(SEARCH_THREADS)

    def _register(ctx: ToolContext, p: Passage, text: str) -> str:
        root = corpus.root_of(p.passage_id)
        return _register_passage(ctx, p, text, str(root) if root is not None else None, corpus.pages_of(p.passage_id))

    async def search_corpus(args: SearchCorpusArgs, ctx: ToolContext) -> str:
        entries = corpus.lookup(args.query, INDEX_ENTRIES)
        try:
            hits = await trio.to_thread.run_sync(corpus.search, args.query, args.k, args.match, limiter=limiter)
        except NoSearchableWords as e:
            if not entries:  # "what does := do?": no words, but the index lists the operator
                raise ToolError(str(e)) from None
            hits = []
        except CorpusError as e:
            raise ToolError(str(e)) from None
        results = [_listed(p, _register(ctx, p, p.snippet), score=round(p.score, 3)) for p in hits]
        terms = list(dict.fromkeys(query_terms(args.query) + name_runs(args.query) + letter_names(args.query)))
        stats = {"passages": corpus.passage_count(), "term_passages": corpus.term_passages(terms),
                 "term_titles": corpus.term_titles(terms)}
        payload: dict[str, Any] = {"query": args.query, "results": results, "corpus": stats}
        if entries:
            payload["index"] = [{"entry": h.entry, **_listed(h.passage, _register(ctx, h.passage, h.passage.snippet))}
                                for h in entries]
        return untrusted("corpus search", payload)

    async def read_passage(args: ReadPassageArgs, ctx: ToolContext) -> str:
        try:
            got = corpus.read(_passage_id(args.passage_id.strip(), ctx))
        except CorpusError as e:
            raise ToolError(str(e)) from None
        p = got.passage
        source_id = _register(ctx, p, p.text)
        return untrusted(
            "corpus passage",
            {
                "source_id": source_id,
                "passage_id": p.passage_id,
                "title": p.title,
                "heading": p.heading,
                "path": p.path,
                "text": p.text,
                "context_before": _neighbour(ctx, p.passage_id, -1) if got.context_before else None,
                "context_after": _neighbour(ctx, p.passage_id, +1) if got.context_after else None,
            },
        )

    def _neighbour(ctx: ToolContext, passage_id: str, step: int) -> dict[str, Any] | None:
        """The chunk before/after, registered as a source of its own so it can be cited precisely."""
        base, _, n = passage_id.rpartition("#")
        try:
            q = corpus.read(f"{base}#{int(n) + step}", context=0).passage
        except (CorpusError, ValueError):
            return None
        return {"source_id": _register(ctx, q, q.text), "passage_id": q.passage_id, "heading": q.heading,
                "text": q.text}

    return [
        Tool(SEARCH_CORPUS, SEARCH_DESCRIPTION, SearchCorpusArgs, search_corpus),
        Tool(READ_PASSAGE, READ_DESCRIPTION, ReadPassageArgs, read_passage),
    ]
