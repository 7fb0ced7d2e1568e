"""Ranking by meaning: passage vectors kept beside the full-text index, a hybrid search, and the
settings that choose the embedding model. Storage rules are tested with a small deterministic
encoder; what the real model finds, with the real model (skipped when it is not installed)."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from subagents.corpus import Corpus, CorpusIndex, IndexStage, make_corpus_tools
from subagents.corpus import vectors as vectors_module
from subagents.corpus.embedding import load_encoder
from subagents.model import ToolUseBlock
from subagents.sources import SourceRegistry
from subagents.tools import ToolContext, Toolbox

from .conftest import EMBEDDING_MODEL, needs_model

MODEL = EMBEDDING_MODEL

DOCS = {
    "tempfile.md": "# tempfile — temporary files\n\nTemporaryDirectory() creates a temporary directory. On completion "
                   "of the context the directory and everything in it are removed from the filesystem.\n",
    "gears.md": "# Gears\n\nThe gears of a widget turn its shaft. Keep a folder of gear drawings next to the "
                "machine when you are finished with a repair.\n",
    "logging.md": "# Logging\n\nA handler sends log records to a destination such as a stream or a file.\n",
    "colours.md": "# Colours\n\nThe palette holds the named colours a theme may use for text and borders.\n",
}
QUESTION = "I need a scratch folder that disappears on its own when I'm finished"


class WordHashEncoder:
    """Bag of hashed words: deterministic, fast; enough to test what is stored and recomputed."""

    dim = 64

    def __init__(self, identity: str = "test-words-1", fail_on_call: int | None = None) -> None:
        self.identity = identity
        self.calls: list[int] = []
        self.fail_on_call = fail_on_call

    def encode(self, texts: Sequence[str], max_tokens: int | None = None) -> np.ndarray:
        self.calls.append(len(texts))
        if self.fail_on_call is not None and len(self.calls) == self.fail_on_call:
            raise KeyboardInterrupt
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, int(hashlib.sha1(w.encode()).hexdigest(), 16) % self.dim] += 1
            out[i] /= np.linalg.norm(out[i]) or 1.0
        return out


def write_docs(root: Path, docs: dict[str, str] = DOCS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (root / name).write_text(text)
    return root


# ---------------------------------------------------------------- storage


def test_every_passage_gets_a_vector_and_only_changed_files_are_embedded_again(tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    enc = WordHashEncoder()
    with CorpusIndex.open(root, tmp_path / "cache", encoder=enc) as ix:
        first = ix.update()
        assert first.embedded == first.passages == first.vectors == 4
        again = ix.update()
        assert (again.embedded, again.vectors) == (0, 4)
        (root / "gears.md").write_text("# Gears\n\nGears mesh.\n\nA second paragraph about shafts.\n")
        (root / "colours.md").unlink()
        changed = ix.update()
        assert changed.embedded == 1  # the changed file's passage; the removed file's vector went with it
        assert changed.vectors == changed.passages == 3


def test_vectors_of_another_model_are_recomputed(tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    with CorpusIndex.open(root, tmp_path / "cache", encoder=WordHashEncoder("model-a")) as ix:
        ix.update()
    with CorpusIndex.open(root, tmp_path / "cache", encoder=WordHashEncoder("model-b")) as ix:
        assert ix.update().embedded == 4
    with CorpusIndex.open(root, tmp_path / "cache", encoder=WordHashEncoder("model-b")) as ix:
        assert ix.update().embedded == 0


def test_an_interrupted_embedding_keeps_its_finished_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_module, "BATCH", 1)
    root = write_docs(tmp_path / "docs")
    with CorpusIndex.open(root, tmp_path / "cache", encoder=WordHashEncoder(fail_on_call=3)) as ix:
        with pytest.raises(KeyboardInterrupt):
            ix.update()
    enc = WordHashEncoder()
    with CorpusIndex.open(root, tmp_path / "cache", encoder=enc) as ix:
        st = ix.update()
        assert (st.embedded, st.vectors) == (2, 4)  # two batches were committed before the interrupt
        assert enc.calls == [1, 1]


def test_a_reopened_index_reuses_its_vectors_until_a_passage_changes(tmp_path: Path) -> None:
    """A run reopens the index: its vectors are read once per process and reused while nothing changed;
    a changed file (whose passages may get the chunk ids the old ones had) is searched with its new vector."""
    root = write_docs(tmp_path / "docs")
    enc = WordHashEncoder()

    def similarity(query: str, cache: str = "cache") -> dict[str, float | None]:
        with Corpus.open([root], cache_dir=tmp_path / cache, encoder=enc) as c:
            return {h.path: h.semantic for h in c.search(query, 4)}

    def matrix() -> object:
        with CorpusIndex.open(root, tmp_path / "cache", encoder=enc) as ix:
            ix.update()
            return ix.vectors.matrix()

    first = matrix()
    assert matrix() is first
    query = "palette colours theme"
    before = similarity(query)["colours.md"]
    (root / "colours.md").write_text("# Colours\n\nA palette of colours for a theme, nothing else.\n")
    after = similarity(query)["colours.md"]
    assert after != before and after == similarity(query, "fresh-cache")["colours.md"]  # as a new index has it
    changed = matrix()
    assert changed is not first
    (root / "gears.md").unlink()  # nothing to embed: the update itself says the passages changed
    assert all(rel != "gears.md" for rel, _ in matrix().keys)


def test_an_index_from_before_generations_were_kept_gets_one_and_its_vectors_are_reused(tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    enc = WordHashEncoder()
    with CorpusIndex.open(root, tmp_path / "cache", encoder=enc) as ix:
        ix.update()
        db = ix.db_path
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM meta WHERE key = 'generation'")
    matrices = []
    for _ in range(2):
        with CorpusIndex.open(root, tmp_path / "cache", encoder=enc) as ix:
            ix.update()
            matrices.append(ix.vectors.matrix())
    assert matrices[0] is matrices[1]


def test_embedding_reports_progress_as_its_own_stage(tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    seen: list[tuple] = []
    with CorpusIndex.open(root, tmp_path / "cache", encoder=WordHashEncoder()) as ix:
        ix.update(progress=lambda *a: seen.append(a))
    assert seen[-1] == (4, 4, IndexStage.EMBEDDING)
    assert (4, 4) in seen  # the files stage before it


def test_without_an_encoder_the_index_has_no_vectors_and_search_is_bm25(tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    with Corpus.open([root], cache_dir=tmp_path / "cache") as c:
        assert not c.semantic
        assert all(h.semantic is None for h in c.search("gears shaft"))


# ---------------------------------------------------------------- what the model finds


@needs_model
def test_a_question_worded_unlike_the_documents_finds_the_passage_by_meaning(tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    with Corpus.open([root], cache_dir=tmp_path / "plain") as plain:
        bm25 = [h.path for h in plain.search(QUESTION, 2)]
    assert bm25 == ["gears.md"]  # it shares "folder" and "finished" with the question; tempfile shares no word
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=load_encoder(MODEL)) as c:
        assert c.semantic
        hits = c.search(QUESTION, 2)
    sims = {h.path: h.semantic for h in hits}
    assert set(sims) == {"gears.md", "tempfile.md"}, sims  # found by meaning, next to the word match
    assert sims["tempfile.md"] > sims["gears.md"] + 0.1  # and it says which one is about the question


@needs_model
def test_an_exact_identifier_still_ranks_its_entry_first(tmp_path: Path) -> None:
    docs = {f"page{i}.md": f"# Page {i}\n\nTemporary directories and files are cleaned up here in way {i}.\n"
            for i in range(8)}
    docs["api.md"] = "# API\n\nmkdtemp_frobnicate(prefix) returns the name of a new directory.\n"
    root = write_docs(tmp_path / "docs", docs)
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=load_encoder(MODEL)) as c:
        assert c.search("mkdtemp_frobnicate", 3)[0].path == "api.md"


@needs_model
def test_a_name_asked_about_is_not_crowded_out_by_passages_close_in_meaning(tmp_path: Path) -> None:
    docs = {f"temp{i}.md": f"# Temporary directories {i}\n\nA temporary directory is removed automatically when "
                           f"it is no longer needed, with all its files, in case {i}.\n" for i in range(30)}
    docs["palette.md"] = "# Palette\n\nrmtree_onerror_hook is listed in the palette table beside the border colours.\n"
    root = write_docs(tmp_path / "docs", docs)
    question = "What does rmtree_onerror_hook do when a temporary directory cannot be removed?"
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=load_encoder(MODEL)) as c:
        assert "palette.md" in [h.path for h in c.search(question, 5)]  # the only passage naming it, far in meaning
        assert "palette.md" not in [h.path for h in c.search("What happens when a temporary directory cannot be "
                                                              "removed?", 5)]  # no name asked: ranked by meaning


@needs_model
async def test_the_search_tool_shows_each_results_similarity(tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=load_encoder(MODEL)) as c:
        box = Toolbox(make_corpus_tools(c))
        ctx = ToolContext(agent_id="t", sources=SourceRegistry())
        out = await box.run(ToolUseBlock("u1", "search_corpus", {"query": QUESTION, "k": 3}), ["search_corpus"], ctx)
    assert not out.result.is_error
    data = json.loads(re.search(r"<retrieved_material[^>]*>\s*(.*?)\s*</retrieved_material>", out.result.content,
                                re.S).group(1))
    closest = max(data["results"], key=lambda r: r["semantic"])
    assert closest["title"].startswith("tempfile")
    assert all(-1 <= r["semantic"] <= 1 for r in data["results"])



async def test_the_documentations_own_index_entries_show_their_similarity_too(tmp_path: Path) -> None:
    """An entry of the docs' own index a search lists is ranked like a result: it carries `semantic`."""
    from .test_corpus import DOCBOOK_INDEX

    root = write_docs(tmp_path / "pg", {
        "bookindex.html": DOCBOOK_INDEX.format(fillers="".join(
            f'<dt>filler{i:02d}, <a class="indexterm" href="misc.html">Misc {i}</a></dt>' for i in range(35))),
        "datatypes.html": '<html><body><h1>Data Types</h1><div id="SERIAL"><h2>Serial Types</h2><p>The serial '
                          'types make unique identifier columns.</p></div></body></html>',
        "misc.html": "<html><body><h1>Misc</h1><p>Nothing much.</p></body></html>"})
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=WordHashEncoder()) as c:
        box = Toolbox(make_corpus_tools(c))
        ctx = ToolContext(agent_id="t", sources=SourceRegistry())
        out = await box.run(ToolUseBlock("u1", "search_corpus", {"query": "auto-increment id column"}),
                            ["search_corpus"], ctx)
    data = json.loads(re.search(r"<retrieved_material[^>]*>\s*(.*?)\s*</retrieved_material>", out.result.content,
                                re.S).group(1))
    entry = data["index"][0]
    assert entry["entry"] == "auto-increment" and -1 <= entry["semantic"] <= 1

# ---------------------------------------------------------------- the CLI


@needs_model
def test_sigterm_while_embedding_ends_like_ctrl_c_and_the_next_run_embeds_only_the_rest(tmp_path: Path) -> None:
    import signal
    import sqlite3

    from subagents.corpus import index_path_for

    from .conftest import write_widget_corpus
    from .test_interrupt_indexing import signal_while_indexing, start_run

    docs = tmp_path / "docs"
    write_widget_corpus(docs, 90, sections=40)  # some 360 passages: seconds of embedding
    proc = start_run(tmp_path, docs, embedding="default")
    out, err = signal_while_indexing(proc, signal.SIGTERM, shows="embedded for semantic ranking")
    assert proc.returncode == 143, err
    lines = [ln for ln in err.splitlines() if ln.startswith("research:")]
    assert len(lines) == 1 and "interrupted while indexing the corpus" in lines[0] and "Traceback" not in err, err
    assert out == "" and not (tmp_path / "runs").exists()
    db = index_path_for(docs.resolve(), tmp_path / "cache")
    con = sqlite3.connect(db)
    kept, passages = (con.execute(f"SELECT count({c}) FROM {t}").fetchone()[0]
                      for c, t in (("DISTINCT chunk_id", "vectors"), ("*", "chunks")))
    con.close()
    assert 0 < kept < passages  # the batches finished before the signal were kept
    proc = start_run(tmp_path, docs, embedding="default")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"{passages - kept} embedded; semantic ranking on" in err and "gears" in out


def test_the_corpus_line_says_whether_searches_rank_by_meaning(research_in_process, tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    code, out, err = research_in_process("run", QUESTION, "--corpus", str(root), "--embedding-model", "off")
    assert code in (0, 3), err
    assert "semantic ranking off (--embedding-model off)" in err
    if MODEL is not None:
        code, out, err = research_in_process("run", QUESTION, "--corpus", str(root))
        assert "4 embedded; semantic ranking on" in err, err
        recorded = sorted(json.loads(m.read_text())["options"]["embedding_model"]
                          for m in (tmp_path / "runs").glob("*/manifest.json"))
        assert recorded == sorted(["off", str(MODEL.resolve())])


def test_an_embedding_model_path_without_a_model_is_a_usage_error(research_in_process, tmp_path: Path) -> None:
    root = write_docs(tmp_path / "docs")
    (tmp_path / "empty").mkdir()
    for bad, why in ((tmp_path / "nowhere", "no such directory"), (tmp_path / "empty", "missing config.json")):
        code, out, err = research_in_process("run", QUESTION, "--corpus", str(root), "--embedding-model", str(bad))
        assert code == 2 and why in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_the_environment_and_config_file_choose_the_model_and_the_flag_wins(tmp_path: Path) -> None:
    from lead_agent.settings import UsageError, resolve_settings

    base = {"question": "q?", "corpus": [str(write_docs(tmp_path / "docs"))]}
    off = resolve_settings(base, environ={"RESEARCH_EMBEDDING_MODEL": "off"}, use_config_file=False)
    assert off.embedding.model_dir is None and "off" in off.embedding.why_off
    with pytest.raises(UsageError, match="no such directory"):
        resolve_settings({**base, "embedding_model": str(tmp_path / "x")}, environ={"RESEARCH_EMBEDDING_MODEL": "off"},
                         use_config_file=False)
    cfg = tmp_path / "research.toml"
    cfg.write_text('embedding_model = "off"\n')
    s = resolve_settings(base, environ={"RESEARCH_CONFIG": str(cfg)})
    assert s.embedding.model_dir is None
    default = resolve_settings(base, environ={}, use_config_file=False)
    assert default.embedding.model_dir == MODEL or (MODEL is None and "pip install" in default.embedding.why_off)


@pytest.mark.parametrize("encoder", [None, WordHashEncoder()], ids=["words", "words+meaning"])
async def test_a_search_for_every_word_returns_only_passages_holding_all_of_them(tmp_path: Path, encoder) -> None:
    # "folder" and "finished" meet in gears.md only; any-word search also brings the passages with one of them,
    # and a ranking by meaning would add the closest others (tempfile.md) were it not held to the matched ones
    docs = {**DOCS, "folders.md": "# Folders\n\nA folder groups files; a folder can hold other folders.\n",
            "done.md": "# Done\n\nA job is finished when its last step has run and its log is closed.\n"}
    root = write_docs(tmp_path / "docs", docs)
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=encoder) as c:
        box = Toolbox(make_corpus_tools(c))
        ctx = ToolContext(agent_id="t", sources=SourceRegistry())

        async def paths(args: dict) -> list[str]:
            out = await box.run(ToolUseBlock("u", "search_corpus", args), ["search_corpus"], ctx)
            assert not out.result.is_error, out.result.content
            data = json.loads(re.search(r"<retrieved_material[^>]*>\s*(.*?)\s*</retrieved_material>",
                                        out.result.content, re.S).group(1))
            return [r["title"] for r in data["results"]]

        assert await paths({"query": "folder finished", "k": 5, "match": "all"}) == ["Gears"]
        assert {"Gears", "Folders", "Done"} <= set(await paths({"query": "folder finished", "k": 5}))
        out = await box.run(ToolUseBlock("u", "search_corpus", {"query": "folder", "match": "some"}),
                            ["search_corpus"], ctx)
        assert out.result.is_error  # a match the tool does not know is the caller's mistake, said as such


def test_a_page_whose_subject_is_deprecated_ranks_below_its_successor_unless_named(tmp_path: Path) -> None:
    # the old module's page matches the question's words better; its opening says it is deprecated, so its
    # successor's page comes first, unless the question names the old module
    docs = {
        "oldflags.md": "# oldflags — Parser for command flags\n\nDeprecated since version 3.2: The oldflags module is "
                       "deprecated; development continues with the newflags module.\n\n## Flags\n\nA verbose flag "
                       "switch is turned on with --verbose on the command line of a script; a verbose switch takes no "
                       "value.\n",
        "newflags.md": "# newflags — Parser for command-line flags\n\nA switch such as --verbose that takes no value is "
                       "added with action store_true.\n",
        "colours.md": "# Colours\n\nThe palette holds the named colours a theme may use for text and borders.\n",
    }
    root = write_docs(tmp_path / "docs", docs)
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=WordHashEncoder()) as c:
        assert c.search("verbose switch for a script's command line", 3)[0].path == "newflags.md"
        assert c.search("oldflags verbose switch for a script's command line", 3)[0].path == "oldflags.md"


def test_a_deprecated_page_that_names_no_successor_keeps_its_rank(tmp_path: Path) -> None:
    # deprecated, but nothing said to replace it: it is still the page that documents what it does
    docs = {
        "oldsound.md": "# oldsound — Read sound headers\n\nDeprecated since version 3.11: The oldsound module is "
                       "deprecated (see PEP 9 for details).\n\n## Headers\n\nThe sound header of a file tells its "
                       "sample rate and its channels.\n",
        "wave.md": "# wave — Read wave files\n\nA wave file has frames; the sound of each frame is a sample.\n",
        "colours.md": "# Colours\n\nThe palette holds the named colours a theme may use for text and borders.\n",
    }
    root = write_docs(tmp_path / "docs", docs)
    with Corpus.open([root], cache_dir=tmp_path / "cache", encoder=WordHashEncoder()) as c:
        assert c.search("sample rate in the sound header of a file", 3)[0].path == "oldsound.md"


@pytest.mark.parametrize("title, opening, subject", [
    ("optparse — Parser for command line options", "Deprecated since version 3.2: The optparse module is deprecated "
     "and will not be developed further; development will continue with the argparse module.", "optparse"),
    ("asyncore — Asynchronous socket handler", "The asyncore module is deprecated (see PEP 594 for details). Please "
     "use asyncio instead.", "asyncore"),
    # deprecated, but no successor named: still the page for what it does
    ("imghdr — Determine the type of an image", "The imghdr module is deprecated (see PEP 594 for details and "
     "alternatives).", ""),
    # another module is the deprecated one: not this page's subject
    ("importlib — The implementation of import", "The imp module is deprecated in favor of importlib.", ""),
])
def test_a_page_is_superseded_when_its_opening_says_its_subject_is_deprecated_for_another(
        title: str, opening: str, subject: str) -> None:
    from subagents.corpus.index import deprecated_subject

    assert deprecated_subject(title, opening) == subject
