"""How well the tests guard the core seams: a mutation score per module (mutmut) and line coverage
of the whole suite, CLI subprocesses included (coverage.py through COVERAGE_PROCESS_START).

    python bench/bench_mutation.py                       # every seam below, then coverage of tests/
    python bench/bench_mutation.py --modules subagents/loop.py --no-coverage
    python bench/bench_mutation.py --no-mutation         # coverage only

Mutation: each module is mutated in a throwaway copy of the project and its focused tests (SEAMS)
run against every mutant; a mutant the tests do not notice "survived". The score is killed / all
mutants (timeouts count as killed: the tests noticed), and killed / (all - judged equivalent), where
EQUIVALENT lists survivors that cannot change behaviour, each with why. Goal: >= 90% per module.
Coverage: the suite runs once with COVERAGE_PROCESS_START set, so every Python process it starts
(the `research` CLI in subprocesses, the benches) is measured too. Goal: no module of lead_agent/
or subagents/ under 85% of lines.

Not part of CI's test run (minutes, not seconds). It renices itself to 19 (`--nice`): the machine is shared.
Run time on the 2-core machine, shared with five other developers (load 5-12), reniced: 17 minutes for
the mutation part (1990 mutants; mutmut forks one worker per core; survivors cost the most since every
covering test runs, fetch.py alone takes 7 minutes), 11 minutes for coverage. `--save FILE` keeps the
results as JSON and `--load FILE` prints their report again (with the current EQUIVALENT table).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_MUTATION = 0.90
GOAL_COVERAGE = 85.0

# module -> the tests that exercise it directly (fast, no CLI subprocesses: mutants live in a copy
# the subprocesses would not import)
SEAMS: dict[str, list[str]] = {
    "subagents/tools.py": ["tests/test_seams.py", "tests/test_tool_seam.py"],
    "subagents/delegation.py": ["tests/test_delegation.py", "tests/test_run_shape.py"],
    "lead_agent/citations.py": ["tests/test_citations.py"],
    "subagents/web/guard.py": ["tests/test_web_guard.py"],
    "subagents/web/fetch.py": ["tests/test_web_fetch.py", "tests/test_fake_web_tls.py"],
    "subagents/models/retry.py": ["tests/test_retry_limiter.py"],
    "subagents/models/ratelimit.py": ["tests/test_retry_limiter.py", "tests/test_pricing_tokens.py"],
    "subagents/loop.py": ["tests/test_loop.py"],
    "subagents/transcript.py": ["tests/test_transcript.py", "tests/test_seams.py"],
    "subagents/events.py": ["tests/test_transcript.py", "tests/test_seams.py", "tests/test_run_shape.py"],
}

# Survivors judged equivalent: (module, function, the mutated line as mutmut writes it, comment dropped) -> why.
_CASE = "HTTP header names and httpx.Headers lookups are case-insensitive"
_ZONE = "split('%') keeps the same first part whatever the maxsplit"
_SCOPE = "CPython returns a link-local address's scope in sockaddr[3]: sockaddr[0] never holds a '%'"
_UTF8 = "equivalent where the locale's encoding is UTF-8, as here (C.UTF-8); codec names are case-insensitive"
_DOC = "dataclasses give every event class a __doc__ (the generated signature when it has no docstring)"
_INFER = "pydantic serialises the event dataclass by inference then, with the same JSON-compatible result"
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("subagents/tools.py", "untrusted",
     "body = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=None, indent=1)"):
        "None and False are both falsy",
    ("subagents/web/guard.py", "parse_ipv4_loose", 'h = host.lower().rstrip("XX.XX")'):
        "the host is lower-cased first: no 'X' to strip",
    ("subagents/web/guard.py", "parse_ipv4_loose", 'elif len(p) >= 1 and p.startswith("0"):'):
        "a lone '0' read as octal is 0 too",
    ("subagents/web/guard.py", "parse_ipv4_loose", 'if any(c in "XX89XX" for c in p):'):
        "an octal part holds digits only (checked by the pattern): never an 'X'",
    ("subagents/loop.py", "call_model",
     'model=spec.model.name, system_sha256=hashlib.sha256(request.system.encode("UTF-8")).hexdigest()[:16],'):
        "codec names are case-insensitive",
    ("subagents/transcript.py", "_ends_torn", "return fh.read(None) != b\"\\n\""): "one byte is left after seek(-1, 2)",
    ("subagents/transcript.py", "_ends_torn", "return fh.read(2) != b\"\\n\""): "one byte is left after seek(-1, 2)",
    ("subagents/transcript.py", "read_events", "with open(path, encoding=None) as fh:"): _UTF8,
    ("subagents/transcript.py", "read_events", "with open(path, ) as fh:"): _UTF8,
    ("subagents/transcript.py", "read_events", 'with open(path, encoding="UTF-8") as fh:'): _UTF8,
    ("subagents/transcript.py", "TranscriptWriter.on_event",
     'fh = self._files[record.agent_id] = open(path, "a", encoding=None)'): _UTF8,
    ("subagents/transcript.py", "TranscriptWriter.on_event", 'fh = self._files[record.agent_id] = open(path, "a", )'):
        _UTF8,
    ("subagents/transcript.py", "TranscriptWriter.on_event",
     'fh = self._files[record.agent_id] = open(path, "a", encoding="UTF-8")'): _UTF8,
    ("subagents/transcript.py", "TranscriptWriter.__init__", "self._closed = None"): "None and False are both falsy",
    ("subagents/transcript.py", "TranscriptWriter.on_event",
     'line = json.dumps(record.to_json(), ensure_ascii=None, default=str) + "\\n"'): "None and False are both falsy",
    ("subagents/transcript.py", "TranscriptWriter.on_event",
     'line = json.dumps(record.to_json(), ensure_ascii=False, default=None) + "\\n"'):
        "to_json() holds JSON types only (EventRecord.data dumps in json mode): `default` is never called",
    ("subagents/transcript.py", "TranscriptWriter.on_event",
     'line = json.dumps(record.to_json(), ensure_ascii=False, ) + "\\n"'):
        "to_json() holds JSON types only (EventRecord.data dumps in json mode): `default` is never called",
    ("subagents/transcript.py", "TranscriptWriter.on_event", "fh = None"):
        "reopening the file for each line writes the same bytes (CPython closes the replaced handle at once)",
    ("subagents/transcript.py", "TranscriptWriter.on_event", "fh = self._files.get(None)"):
        "reopening the file for each line writes the same bytes (CPython closes the replaced handle at once)",
    ("subagents/events.py", "event_reference", 'doc = " ".join((t.__doc__ or "XXXX").split())'): _DOC,
    ("subagents/events.py", "event_reference",
     "rows.append(f\"| `{t.kind}` | {t.__name__}{': ' + doc if (doc) or True else ''} | {fields} |\")"): _DOC,
    ("subagents/events.py", "event_reference",
     "rows.append(f\"| `{t.kind}` | {t.__name__}{': ' + doc if doc else 'XXXX'} | {fields} |\")"): _DOC,
    ("subagents/events.py", "EventRecord.data",
     'return _scrub(_adapter(type(self.event)).dump_python(self.event, mode=None))'): _INFER,
    ("subagents/events.py", "EventRecord.data", 'return _scrub(_adapter(type(self.event)).dump_python(self.event, ))'):
        _INFER,
    ("subagents/events.py", "EventRecord.data", 'return _scrub(_adapter(None).dump_python(self.event, mode="json"))'):
        _INFER,
    ("subagents/events.py", "EventRecord.data", 'return _scrub(_adapter(type(None)).dump_python(self.event, mode="json"))'):
        _INFER,
    ("subagents/events.py", "EventRecord.data",
     'return _scrub(_adapter(type(self.event)).dump_python(self.event, mode="XXjsonXX"))'): _INFER,
    ("subagents/events.py", "EventRecord.data",
     'return _scrub(_adapter(type(self.event)).dump_python(self.event, mode="JSON"))'): _INFER,
    ("subagents/events.py", "EventRecord.from_json",
     "event = _adapter(etype).validate_python(data) if (etype is not None) or True else UnknownEvent(kind, dict(data))"):
        "an adapter for None refuses the data with a ValueError, which is caught: UnknownEvent either way",
    ("subagents/web/fetch.py", "_client", "pool=None)"):
        "each client sends one request at a time: it never waits for a pooled connection",
    ("subagents/web/fetch.py", "_client",
     "timeout = httpx.Timeout(connect=config.connect_timeout, read=config.read_timeout, write=None,"):
        "a GET has no body and its headers fit the socket buffer: a write never blocks",
    ("subagents/web/fetch.py", "_client", "return httpx.AsyncClient(transport=transport, timeout=timeout, trust_env=False,"):
        "httpx does not follow redirects unless told to",
    ("subagents/web/fetch.py", "_fetch", "private = None"): "None and False are both falsy",
    ("subagents/web/fetch.py", "_BoundedDecoder.__init__", "self.started = None"): "None and False are both falsy",
    ("subagents/web/fetch.py", "_shared_ssl_context", "_ssl_context = None"):
        "given verify=None, httpcore builds its own verifying default context",
    ("subagents/web/fetch.py", "_redirect_target", "raise ToolError(None) from None"):
        "unreachable: httpx refuses an invalid Location itself while reading the response",
    ("subagents/web/fetch.py", "_redirect_target",
     'raise ToolError(f"bad redirect Location {location[:201]!r} from {target.url}: {e}") from None'):
        "unreachable: httpx refuses an invalid Location itself while reading the response",
    ("subagents/web/fetch.py", "_send_pinned",
     "raise ToolError(f\"could not fetch {target.url}: {type(e).__name__}: {e or 'XXconnection failedXX'}\") from None"):
        "httpx's connection errors always carry a message: the fallback text is never used",
    ("subagents/web/fetch.py", "_send_pinned",
     "raise ToolError(f\"could not fetch {target.url}: {type(e).__name__}: {e or 'CONNECTION FAILED'}\") from None"):
        "httpx's connection errors always carry a message: the fallback text is never used",
    ("lead_agent/citations.py", "_marker_ids", "if m.group(4) is None:"):
        "groups 3 and 4 match together (the range end and its number)",
    ("lead_agent/citations.py", "check_citations", "in_fence = None"): "None and False are both falsy",
    ("subagents/web/guard.py", "normalise_url", "raise GuardError(None) from None"):
        "unreachable: httpx IDNA-encodes every host, so decoding it as ASCII cannot fail",
    ("subagents/web/guard.py", "normalise_url", 'raise GuardError(f"malformed host in {str(None)[:200]!r}") from None'):
        "unreachable: httpx IDNA-encodes every host, so decoding it as ASCII cannot fail",
    ("subagents/web/guard.py", "normalise_url", 'raise GuardError(f"malformed host in {str(url)[:201]!r}") from None'):
        "unreachable: httpx IDNA-encodes every host, so decoding it as ASCII cannot fail",
    ("subagents/web/guard.py", "default_resolver", "infos = await trio.socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)"):
        "the port changes only sockaddr[1]; the addresses are the same",
    ("subagents/web/guard.py", "default_resolver", "infos = await trio.socket.getaddrinfo(host, port, )"):
        "other socket types repeat the same addresses, which are de-duplicated",
    ("subagents/web/guard.py", "default_resolver", "break"):
        "getaddrinfo here answers only AF_INET and AF_INET6, so the skip never happens",
    ("subagents/web/guard.py", "default_resolver", 'ip = str(sockaddr[0]).split(None, 1)[0]'): _SCOPE,
    ("subagents/web/guard.py", "default_resolver", 'ip = str(sockaddr[0]).rsplit("%", 1)[0]'): _SCOPE,
    ("subagents/web/guard.py", "default_resolver", 'ip = str(sockaddr[0]).split("XX%XX", 1)[0]'): _SCOPE,
    ("subagents/tools.py", "Tool.spec", 'schema.pop("title", )'):
        "pydantic's model_json_schema always has a title, so pop never needs its default",
    ("subagents/delegation.py", "plan_schema", 'schema.pop("title", )'):
        "pydantic's model_json_schema always has a title, so pop never needs its default",
    ("subagents/models/retry.py", "with_retries", 'last: TransientError | None = ""'):
        "`last` is always set before it is read (the loop breaks only after an error)",
    ("subagents/models/retry.py", "with_retries", "for n in range(policy.max_retries + 2):"):
        "the loop returns on success and breaks at n == max_retries: the extra iteration never starts",
    ("subagents/models/ratelimit.py", "_Bucket.__init__", "if per_minute < 0:"):
        "RateLimiter makes a bucket only for a truthy limit: 0 never reaches it",
    ("subagents/models/ratelimit.py", "_Bucket.wait_for", "return 0.0 if (missing <= 0) and False else missing / self.rate"):
        "a negative wait acts as 0: acquire proceeds when the largest wait is <= 0",
    ("subagents/models/ratelimit.py", "_Bucket.wait_for", "return 0.0 if missing < 0 else missing / self.rate"):
        "missing == 0 gives 0 / rate == 0.0 either way",
    ("subagents/web/guard.py", "address_problem", 'return "XXlocal NAT64XX"'):
        "unreachable on Python 3.11: 64:ff9b:1::/48 is_reserved, which is checked first",
    ("subagents/web/guard.py", "address_problem", 'return "local nat64"'):
        "unreachable on Python 3.11: 64:ff9b:1::/48 is_reserved, which is checked first",
    ("subagents/web/guard.py", "address_problem", 'return "LOCAL NAT64"'):
        "unreachable on Python 3.11: 64:ff9b:1::/48 is_reserved, which is checked first",
    ("subagents/web/guard.py", "address_problem", 'return "XXnot globally routableXX"'):
        "unreachable on Python 3.11: is_global is `not is_private` except 100.64/10, which is checked first",
    ("subagents/web/guard.py", "address_problem", 'return "NOT GLOBALLY ROUTABLE"'):
        "unreachable on Python 3.11: is_global is `not is_private` except 100.64/10, which is checked first",
    ("subagents/web/guard.py", "check_url", 'host = u.raw_host.decode("ASCII")'): "codec names are case-insensitive",
    ("subagents/web/guard.py", "normalise_url", 'host = u.raw_host.decode("ASCII").lower()'):
        "codec names are case-insensitive",
    ("subagents/web/guard.py", "normalise_url", "return u.copy_with(host=host, port=port, fragment=None)"):
        "httpx lower-cases the scheme itself",
    ("subagents/web/guard.py", "normalise_url", "return u.copy_with(scheme=scheme, host=host, fragment=None)"):
        "httpx drops a default port itself",
    ("subagents/web/guard.py", "normalise_url", 'name = host.rstrip("XX.XX")'): "the host is lower-cased: no 'X' to strip",
    ("subagents/web/guard.py", "parse_ip_host", 'h = host.strip("XX[]XX")'): "the host is lower-cased: no 'X' to strip",
    ("subagents/web/guard.py", "parse_ip_host", 'h = h.split("%", )[0]'): _ZONE,
    ("subagents/web/guard.py", "parse_ip_host", 'h = h.split("%", 2)[0]'): _ZONE,
    ("subagents/web/guard.py", "check_url", 'addrs.append(ipaddress.ip_address(str(a).split("%", )[0]))'): _ZONE,
    ("subagents/web/guard.py", "check_url", 'addrs.append(ipaddress.ip_address(str(a).split("%", 2)[0]))'): _ZONE,
    ("subagents/web/guard.py", "default_resolver", 'ip = str(sockaddr[0]).split("%", )[0]'): _ZONE,
    ("subagents/web/guard.py", "default_resolver", 'ip = str(sockaddr[0]).split("%", 2)[0]'): _ZONE,
    ("subagents/web/guard.py", "default_resolver", 'ip = str(sockaddr[0]).split("%", None)[0]'): _ZONE,
    ("subagents/web/fetch.py", "_client", 'headers={"user-agent": config.user_agent, "Accept": ACCEPT,'): _CASE,
    ("subagents/web/fetch.py", "_client", 'headers={"USER-AGENT": config.user_agent, "Accept": ACCEPT,'): _CASE,
    ("subagents/web/fetch.py", "_client", 'headers={"User-Agent": config.user_agent, "accept": ACCEPT,'): _CASE,
    ("subagents/web/fetch.py", "_client", 'headers={"User-Agent": config.user_agent, "ACCEPT": ACCEPT,'): _CASE,
    ("subagents/web/fetch.py", "_client", '"accept-encoding": ACCEPT_ENCODING})'): _CASE,
    ("subagents/web/fetch.py", "_client", '"ACCEPT-ENCODING": ACCEPT_ENCODING})'): _CASE,
    ("subagents/web/fetch.py", "_read_body", 'media, charset = parse_content_type(response.headers.get("CONTENT-TYPE"))'):
        _CASE,
    ("subagents/web/fetch.py", "_read_capped", 'declared = response.headers.get("CONTENT-LENGTH")'): _CASE,
    ("subagents/web/fetch.py", "_read_capped",
     'decoder = _BoundedDecoder(response.headers.get("CONTENT-ENCODING", ""), url)'): _CASE,
    ("subagents/web/fetch.py", "_redirect_target", 'location = response.headers.get("LOCATION")'): _CASE,
    ("subagents/web/fetch.py", "_send_pinned",
     'request = client.build_request("GET", pinned, headers={"host": _host_header(target.url)}, extensions=extensions)'):
        _CASE,
    ("subagents/web/fetch.py", "_send_pinned",
     'request = client.build_request("GET", pinned, headers={"HOST": _host_header(target.url)}, extensions=extensions)'):
        _CASE,
    ("subagents/web/fetch.py", "_send_pinned",
     'request = client.build_request("get", pinned, headers={"Host": _host_header(target.url)}, extensions=extensions)'):
        "httpx upper-cases the method",
    ("subagents/web/fetch.py", "_send_pinned", 'if target.url.scheme == "https" or target.host != target.address:'):
        "httpcore uses sni_hostname only for TLS: on plain http it is ignored",
    ("subagents/web/fetch.py", "_host_header", 'host = url.raw_host.decode("ASCII")'): "codec names are case-insensitive",
    ("subagents/web/fetch.py", "_BoundedDecoder.__init__",
     "self.z = None if encoding in (\"\", \"identity\") else zlib.decompressobj(32 if not self.deflate else 15)"):
        "wbits 32 detects the gzip header as 31 expects it (and would accept zlib too)",
    ("subagents/web/fetch.py", "_BoundedDecoder.decode", "while data or not self.z.eof:"):
        "aiter_raw never yields an empty chunk, so `data` is empty only once the stream is consumed",
    ("subagents/web/fetch.py", "_BoundedDecoder._pick_deflate_format", "zlib.decompressobj(15).decompress(data[:3])"):
        "a zlib header is two bytes: a third byte decides nothing",
}
for _field in ("trust_env=None", "trust_env=True"):
    EQUIVALENT[("subagents/web/fetch.py", "_client",
                f"verify=_shared_ssl_context(), {_field}, limits=httpx.Limits(max_keepalive_connections=0)")] = (
        "the transport's trust_env only reads SSL_CERT_* when verify is not a context, and it is one")
    EQUIVALENT[("subagents/web/fetch.py", "_client",
                f"return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False, {_field},")] = (
        "with an explicit transport httpx never reads proxy variables (allow_env_proxies needs transport is None)")
EQUIVALENT[("subagents/web/fetch.py", "_client",
            "verify=_shared_ssl_context(), limits=httpx.Limits(max_keepalive_connections=0)")] = (
    "trust_env defaults to True: as above, with a context for verify the transport never reads it")
EQUIVALENT[("subagents/web/fetch.py", "_client",
            "return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False, headers={\"User-Agent\": config.user_agent, \"Accept\": ACCEPT,")] = (
    "trust_env defaults to True: as above, an explicit transport means no proxy variables")
EQUIVALENT[("subagents/web/fetch.py", "_client",
            "return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=None, trust_env=False,")] = (
    "None is falsy: redirects are not followed either way")

KILLED = {"killed", "timeout", "caught by type check"}


@dataclass
class ModuleScore:
    module: str
    statuses: dict[str, str] = field(default_factory=dict)  # mutant name -> status
    diffs: dict[str, tuple[str, str]] = field(default_factory=dict)  # survivor -> (removed, added) lines
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return len(self.statuses)

    @property
    def killed(self) -> int:
        return sum(1 for s in self.statuses.values() if s in KILLED)

    def survivors(self) -> list[str]:
        return sorted((n for n, s in self.statuses.items() if s not in KILLED), key=_mutant_order)

    def equivalent(self) -> dict[str, str]:
        out = {}
        for name in self.survivors():
            removed, added = self.diffs.get(name, ("", ""))
            why = EQUIVALENT.get((self.module, function_of(name), added.split("  #")[0].strip()))
            if why:
                out[name] = why
        return out


def _mutant_order(name: str) -> tuple[str, int]:
    base, _, n = name.rpartition("__mutmut_")
    return base, int(n) if n.isdigit() else 0


def function_of(mutant: str) -> str:
    """'subagents.tools.xǁToolboxǁrun__mutmut_8' -> 'Toolbox.run'; '...x_untrusted__mutmut_2' -> 'untrusted'."""
    name = mutant.rpartition("__mutmut_")[0].rsplit(".", 1)[-1]
    if name.startswith("xǁ"):
        return ".".join(p for p in name[2:].split("ǁ") if p)
    return name[2:] if name.startswith("x_") else name


# ---------------------------------------------------------------- the project copy


def project_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        return [f for f in out.splitlines() if (ROOT / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".venv", "runs", "__pycache__", ".git", "mutants"}
        return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]


def copy_project(dest: Path) -> None:
    for rel in project_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "OPENAI_", "RESEARCH_", "COVERAGE_", "MUTANT_"))}


# ---------------------------------------------------------------- mutation


def mutmut_config(module: str, tests: list[str]) -> str:
    return "\n".join([
        "", "[tool.mutmut]",
        'source_paths = ["subagents", "lead_agent"]',
        'also_copy = ["runs", "prompts", "README.md"]',
        f"only_mutate = {json.dumps([module])}",
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-n", "0"]',  # mutmut maps tests in one process
        "use_git_change_detection = false",
        "",
    ])


def mutate(module: str, tests: list[str], functions: str | None, jobs: int, keep: Path | None) -> ModuleScore:
    work = Path(tempfile.mkdtemp(prefix="mutation-"))
    score = ModuleScore(module)
    t0 = time.perf_counter()
    try:
        copy_project(work)
        with open(work / "pyproject.toml", "a", encoding="utf-8") as fh:
            fh.write(mutmut_config(module, tests))
        dotted = module[:-3].replace("/", ".")
        names = [f"{dotted}.x*{functions}*__mutmut_*"] if functions else []
        proc = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *names],
                              cwd=work, env=clean_env(), capture_output=True, text=True)
        meta = work / "mutants" / f"{module}.meta"
        if not meta.is_file():
            tail = (proc.stdout + proc.stderr)[-3000:]
            raise RuntimeError(f"mutmut produced no results for {module} (exit {proc.returncode}):\n{tail}")
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        if codes and all(code is None for code in codes.values()):
            tail = (proc.stdout + proc.stderr).replace("\r", "\n")[-3000:]
            raise RuntimeError(f"mutmut checked no mutant of {module} (exit {proc.returncode}):\n{tail}")
        score.statuses = {name: _status(code) for name, code in codes.items()
                          if code is not None and (not names or fnmatch.fnmatch(name, names[0]))}
        score.diffs = survivor_diffs(work, module, score.survivors())
    finally:
        score.seconds = time.perf_counter() - t0
        if keep is not None:
            shutil.copytree(work, keep / Path(module).stem, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    return score


def _status(code: int) -> str:
    from mutmut.stats import status_by_exit_code

    return status_by_exit_code[code]


_DIFFS = """
import json, sys
from pathlib import Path
from mutmut.mutation.diff_apply import get_diff_for_mutant
out = {}
for name in json.loads(sys.argv[2]):
    diff = get_diff_for_mutant(name, path=Path(sys.argv[1])).splitlines()[2:]
    out[name] = ("\\n".join(l[1:] for l in diff if l.startswith("-")), "\\n".join(l[1:] for l in diff if l.startswith("+")))
print(json.dumps(out))
"""


def survivor_diffs(work: Path, module: str, survivors: list[str]) -> dict[str, tuple[str, str]]:
    if not survivors:
        return {}
    proc = subprocess.run([sys.executable, "-c", _DIFFS, module, json.dumps(survivors)], cwd=work, env=clean_env(),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return {name: ("(diff unavailable)", "") for name in survivors}
    return {k: tuple(v) for k, v in json.loads(proc.stdout).items()}


def report_mutation(scores: list[ModuleScore]) -> None:
    print("\nMutation score per module (mutmut; goal >= 90% killed)")
    print(f"{'module':34} {'mutants':>7} {'killed':>6} {'surv.':>5} {'equiv.':>6} {'score':>6} {'w/o eq.':>7} {'time':>6}")
    for s in scores:
        eq = len(s.equivalent())
        rate = s.killed / s.total if s.total else 1.0
        adj = s.killed / (s.total - eq) if s.total - eq else 1.0
        print(f"{s.module:34} {s.total:7} {s.killed:6} {len(s.survivors()):5} {eq:6} {rate:6.1%} {adj:7.1%} "
              f"{s.seconds:5.0f}s")
    total = sum(s.total for s in scores)
    killed = sum(s.killed for s in scores)
    eq = sum(len(s.equivalent()) for s in scores)
    if total:
        print(f"{'all':34} {total:7} {killed:6} {total - killed:5} {eq:6} {killed / total:6.1%} "
              f"{killed / max(1, total - eq):7.1%} {sum(s.seconds for s in scores):5.0f}s")
    for s in scores:
        equivalent = s.equivalent()
        if not s.survivors():
            continue
        print(f"\nSurvivors in {s.module}:")
        for name in s.survivors():
            removed, added = s.diffs.get(name, ("", ""))
            tag = f"  [equivalent: {equivalent[name]}]" if name in equivalent else f"  [{s.statuses[name]}]"
            print(f"  {function_of(name)} #{name.rpartition('__mutmut_')[2]}{tag}")
            for line in removed.splitlines():
                print(f"      - {line.strip()}")
            for line in added.splitlines():
                print(f"      + {line.strip()}")


# ---------------------------------------------------------------- coverage


COVERAGE_RC = """[run]
parallel = True
source_pkgs = lead_agent, subagents
data_file = {data}
[report]
precision = 1
"""


def coverage(tests: list[str]) -> dict[str, tuple[float, int, int]]:
    work = Path(tempfile.mkdtemp(prefix="coverage-"))
    try:
        rc = work / "coveragerc"
        rc.write_text(COVERAGE_RC.format(data=work / ".coverage"))
        env = clean_env()
        env["COVERAGE_PROCESS_START"] = str(rc)  # every Python process the tests start measures itself
        this = f"tests/test_benches.py::test_bench_runs_as_the_readme_shows[bench/{Path(__file__).name}]"
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *tests,
                               "--deselect", this], cwd=ROOT, env=env, capture_output=True, text=True)
        print((proc.stdout.strip().splitlines() or ["(no pytest output)"])[-1])
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"pytest under coverage failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}"
                               f"{proc.stderr[-2000:]}")
        cov = [sys.executable, "-m", "coverage"]
        subprocess.run([*cov, "combine", f"--rcfile={rc}", "-q"], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        subprocess.run([*cov, "json", f"--rcfile={rc}", "-q", "-o", str(work / "cov.json")], cwd=ROOT, env=env,
                       check=True, capture_output=True)
        files = json.loads((work / "cov.json").read_text())["files"]
        out = {}
        for path, data in files.items():
            rel = os.path.relpath(path, ROOT) if os.path.isabs(path) else path
            s = data["summary"]
            out[rel] = (s["percent_covered"], s["covered_lines"], s["num_statements"])
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report_coverage(files: dict[str, tuple[float, int, int]]) -> None:
    print(f"\nLine coverage per module, CLI subprocesses included (goal: none under {GOAL_COVERAGE:.0f}%)")
    under = []
    for rel, (pct, covered, statements) in sorted(files.items()):
        flag = "  <-- under the goal" if pct < GOAL_COVERAGE else ""
        if flag:
            under.append(rel)
        print(f"  {rel:44} {pct:5.1f}%  ({covered}/{statements} lines){flag}")
    covered = sum(c for _, c, _ in files.values())
    statements = sum(n for _, _, n in files.values())
    print(f"  {'all':44} {100 * covered / max(1, statements):5.1f}%  ({covered}/{statements} lines)")
    print(f"modules under {GOAL_COVERAGE:.0f}%: {len(under)}" + (f" ({', '.join(under)})" if under else ""))


# ---------------------------------------------------------------- main


def save(scores: list[ModuleScore], path: Path) -> None:
    path.write_text(json.dumps([{"module": s.module, "statuses": s.statuses, "diffs": s.diffs, "seconds": s.seconds}
                                for s in scores], indent=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", nargs="+", choices=sorted(SEAMS), default=list(SEAMS), help="modules to mutate")
    ap.add_argument("--functions", help="only mutants of functions whose name contains this (a small run)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutmut workers (default: cores)")
    ap.add_argument("--no-mutation", action="store_true")
    ap.add_argument("--no-coverage", action="store_true")
    ap.add_argument("--coverage-tests", nargs="+", default=["tests/"], help="what the coverage run runs")
    ap.add_argument("--keep", type=Path, help="keep each module's mutmut directory here (for `mutmut browse`)")
    ap.add_argument("--save", type=Path, help="also write the mutation results (statuses, survivor diffs) as JSON")
    ap.add_argument("--load", type=Path, help="print the report of saved results instead of mutating again")
    ap.add_argument("--nice", type=int, default=19, help="niceness to run at (default 19: a shared machine; "
                    "at 19 beside busy processes it barely runs)")
    args = ap.parse_args()
    try:
        os.nice(args.nice)  # everything this starts runs at this priority
    except OSError:
        pass
    t0 = time.perf_counter()
    failed: list[str] = []
    if args.load:
        scores = [ModuleScore(d["module"], d["statuses"], {k: tuple(v) for k, v in d["diffs"].items()}, d["seconds"])
                  for d in json.loads(args.load.read_text())]
        report_mutation(scores)
    elif not args.no_mutation:
        scores: list[ModuleScore] = []
        for module in args.modules:
            print(f"mutating {module} (tests: {' '.join(SEAMS[module])}) ...", flush=True)
            try:
                scores.append(mutate(module, SEAMS[module], args.functions, args.jobs, args.keep))
            except RuntimeError as e:  # one module's failure must not lose the others' results
                print(f"  FAILED: {e}", flush=True)
                failed.append(module)
                continue
            s = scores[-1]
            print(f"  {s.killed}/{s.total} killed ({s.killed / max(1, s.total):.1%}) in {s.seconds:.0f}s", flush=True)
            if args.save:  # saved as it goes: a long run interrupted still has its results
                save(scores, args.save)
        report_mutation(scores)
        if failed:
            print(f"\nmodules whose mutation run failed: {', '.join(failed)}")
    if not args.no_coverage and not args.load:
        print(f"\ncoverage of {' '.join(args.coverage_tests)} ...", flush=True)
        report_coverage(coverage(args.coverage_tests))
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    return 1 if not args.load and not args.no_mutation and failed else 0


if __name__ == "__main__":
    sys.exit(main())
