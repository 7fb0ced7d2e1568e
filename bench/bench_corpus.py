"""Corpus benchmark: full index, incremental updates and query latency on the Python docs.

    python bench/bench_corpus.py [--root /usr/share/doc/python3.11/html]

The root itself is indexed from scratch into a fresh temp cache (read-only). For the incremental
steps it is copied to a temp dir, so 5 files can be edited without touching the system docs; the
copy gets its own full index (a second from-scratch sample), then a no-change update and an
update after editing 5 files.
Targets: full index <= 15 s, query p50 <= 5 ms. Prints PASS/MISS; measures, never asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from subagents.corpus import Corpus, CorpusIndex  # noqa: E402

FULL_TARGET_S = 15.0
P50_TARGET_MS = 5.0

QUESTIONS = """\
How do I create a TaskGroup in asyncio?
how to read a file line by line
What is the difference between a list and a tuple?
how do I sort a dictionary by value
How can I parse command line arguments?
how to format a date with strftime
How do I run a shell command and capture its output?
how do decorators work
what does the global interpreter lock do
how to write a context manager
How do I use named groups in a regular expression?
how do I make an HTTP request
how to use a thread pool executor
how to define a dataclass with default values
how to log to a file with rotation
what is a generator expression
How do I serialize an object to JSON?
how to glob files recursively with pathlib
how do I annotate a callable with type hints
how to profile python code
How do I handle exceptions raised in a thread?
what is the walrus operator
how does garbage collection work in CPython
how do I copy a directory tree
how to compute the md5 hash of a file
how to generate random numbers with a seed
How can I create a temporary file?
what are f-strings and how do I format numbers
how to iterate over two lists in parallel
how to merge two dictionaries
What is the method resolution order?
how to implement __eq__ and __hash__
how do I read environment variables
how do I measure execution time of small code snippets
how to create a virtual environment
what is the difference between is and ==
how do I write unit tests with mocks
How do I define an abstract base class?
how to use enum with auto values
how does the with statement work
How can I use functools.lru_cache?
what is a coroutine
how do I cancel an asyncio task
how to wait for multiple tasks with a timeout
how to use a queue between producer and consumer threads
What does __slots__ do?
how to compress data with gzip
how do I read a CSV file into dictionaries
how to parse XML with ElementTree
how do I connect to a sqlite database
how to send an email with smtplib
how do I create a socket server
how to schedule a function call after a delay
How do I pickle an object safely?
what is the difference between str and bytes
how to decode utf-8 bytes with errors ignored
how to check if a file exists
how to get the current working directory
How do I spawn a process with multiprocessing?
how to share state between processes
what is a descriptor
how do properties work
how does super() work with multiple inheritance
how to use itertools groupby
what are keyword-only arguments
how to unpack arguments with star
how to write a list comprehension with a condition
how do I debug a program with pdb
how can I inspect the stack trace of an exception
how to make a class iterable
what is the difference between deepcopy and copy
how to use a defaultdict
how do I count items with Counter
how to round a float to two decimals
what is decimal arithmetic for money
how to work with fractions
how do I get the size of an object in memory
how to use weak references
How do I handle signals like SIGINT?
how to set a timeout on a socket
how to parse a URL into components
how to base64 encode a string
how to use the struct module to pack binary data
how do I create a zip archive
what is the import system and how are modules found
how do I reload a module
how to write a C extension module
how to embed python in a C application
what is reference counting in the C API
how do I build a wheel and distribute a package
how do I install packages with pip
what changed in python 3.11
what are exception groups and except*
how to add notes to an exception
how to use match statements for structural pattern matching
how to use typing.Protocol for structural subtyping
how to annotate a generic class with TypeVar
how to read a TOML file
""".strip().splitlines()

KEYWORDS = """\
asyncio.TaskGroup
create_task
asyncio.gather timeout
subprocess.run capture_output
json.dumps indent
pathlib.Path.glob
argparse add_argument
logging.handlers RotatingFileHandler
functools.partial
functools.lru_cache
itertools.chain
itertools.product
collections.OrderedDict move_to_end
collections.namedtuple
dataclasses.field default_factory
typing.Optional
typing.TypedDict
typing.Literal
contextlib.contextmanager
contextlib.ExitStack
os.walk
os.environ
os.path.join
shutil.copytree
shutil.rmtree
tempfile.NamedTemporaryFile
datetime.timedelta
datetime.strptime
time.monotonic
time.perf_counter
re.compile
re.sub
re.fullmatch
string.Template
textwrap.dedent
unicodedata.normalize
struct.unpack
codecs.open
io.StringIO
io.BytesIO
pickle.loads
copyreg
shelve
sqlite3.connect
csv.DictReader
zipfile.ZipFile
tarfile.open
gzip.open
hashlib.sha256
hmac.compare_digest
secrets.token_hex
random.shuffle
statistics.median
math.isclose
decimal.Decimal
fractions.Fraction
threading.Lock
threading.Event
queue.Queue
multiprocessing.Pool
concurrent.futures.ProcessPoolExecutor
selectors
socket.create_connection
ssl.create_default_context
http.server
urllib.parse.urlparse
urllib.request.urlopen
email.message
smtplib.SMTP
xml.etree.ElementTree
html.parser
webbrowser
unittest.mock.patch
doctest
pdb.set_trace
traceback.format_exc
warnings.warn
inspect.signature
dis
ast.parse
importlib.import_module
importlib.resources
sys.path
sys.exit
atexit.register
signal.signal
gc.collect
weakref.WeakValueDictionary
abc.ABCMeta
enum.Enum
operator.itemgetter
heapq.heappush
bisect.insort
array.array
memoryview
bytearray
PyObject_GetAttr
Py_INCREF
PyArg_ParseTuple
venv
""".strip().splitlines()


def edit_files(root: Path, n: int) -> list[Path]:
    """Change the content (not just the mtime) of `n` HTML files."""
    picked = sorted(root.glob("library/*.html"))[:n]
    for i, p in enumerate(picked):
        data = p.read_text(encoding="utf-8").replace("</body>", f"<p>benchmark edit {i}</p></body>", 1)
        p.write_text(data, encoding="utf-8")
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    return picked


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/usr/share/doc/python3.11/html")
    args = ap.parse_args()
    src = Path(args.root)
    if not src.is_dir():
        sys.exit(f"corpus root not found: {src}")
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        print(f"corpus: {src} ({os.cpu_count()} CPUs), caches: fresh temp dirs")
        with CorpusIndex.open(src, Path(tmp) / "cache-orig") as ix:
            full = ix.update()
            db_mb = ix.db_path.stat().st_size / 1e6
        print(f"full index:        {full.seconds:6.2f} s   files={full.files_seen} indexed={full.indexed} "
              f"passages={full.passages} skipped={len(full.problems)} db={db_mb:.1f} MB   "
              f"target <= {FULL_TARGET_S:.0f} s  {verdict(full.seconds <= FULL_TARGET_S)}")

        root = Path(tmp) / src.name
        shutil.copytree(src, root, symlinks=True)
        cache = Path(tmp) / "cache"
        with CorpusIndex.open(root, cache) as ix:
            copy = ix.update()
        print(f"full index (copy): {copy.seconds:6.2f} s   files={copy.files_seen} passages={copy.passages}   "
              f"{verdict(copy.seconds <= FULL_TARGET_S)}")

        t0 = time.perf_counter()
        corpus = Corpus.open([root], cache)  # what a run does: open + incremental update
        open_s = time.perf_counter() - t0
        nochange = corpus.stats[corpus.indexes[0].root_tag]
        print(f"no-change update:  {nochange.seconds:6.3f} s   indexed={nochange.indexed} unchanged={nochange.unchanged} "
              f"(Corpus.open total {open_s:.3f} s)")

        edit_files(root, 5)
        five = corpus.indexes[0].update()
        print(f"5 files edited:    {five.seconds:6.3f} s   indexed={five.indexed} unchanged={five.unchanged}")

        queries = QUESTIONS + KEYWORDS
        for q in queries[:10]:  # warm the page cache
            corpus.search(q)
        lat: dict[str, list[float]] = {"questions": [], "keywords": []}
        empty = 0
        for kind, qs in (("questions", QUESTIONS), ("keywords", KEYWORDS)):
            for q in qs:
                t = time.perf_counter()
                hits = corpus.search(q, 8)
                lat[kind].append((time.perf_counter() - t) * 1000)
                empty += not hits
        every = lat["questions"] + lat["keywords"]
        p50, p95 = pct(every, 50), pct(every, 95)
        print(f"queries:           n={len(every)} ({len(QUESTIONS)} questions, {len(KEYWORDS)} keyword/API), "
              f"k=8, no results: {empty}")
        for kind, xs in lat.items():
            print(f"  {kind:10s}       p50 {pct(xs, 50):5.2f} ms   p95 {pct(xs, 95):5.2f} ms   max {max(xs):5.2f} ms")
        print(f"  all              p50 {p50:5.2f} ms   p95 {p95:5.2f} ms   target p50 <= {P50_TARGET_MS:.0f} ms  "
              f"{verdict(p50 <= P50_TARGET_MS)}")
        for q in ("How do I create a TaskGroup in asyncio?", "how to read a file line by line", "json.dumps indent"):
            top = corpus.search(q, 1)
            print(f"  e.g. {q!r} -> {top[0].passage_id if top else '(none)'} [{top[0].heading if top else ''}]")
        corpus.close()


if __name__ == "__main__":
    main()
