"""Record/replay cache for searches and fetches.

Layout under the cache directory (``$RESEARCH_CACHE_DIR/web`` by default)::

    search/<sha256>.json          {"request", "stored_at", "query", "k", "results": [...]}
    fetch/<sha256>.json           {"request", "stored_at", "url", "requested_url", "status",
                                   "content_type", "charset", "redirects", "private", "body": "<sha256>.body"}
    fetch/<sha256>.body           the raw body bytes, so replay re-runs the real extraction code

The key is the sha256 of the normalised request:
``"search\\n<query lowercased, whitespace collapsed>\\n<k>"`` or
``"fetch\\n<url: lowercase scheme and host, default port and fragment dropped>"``.

Modes: "read-through" serves entries younger than the TTL and refetches stale ones; "record"
always goes live and stores; "replay" serves recorded entries only (a miss is an error naming the
request); "off" neither reads nor writes. Writes are atomic (a unique temp file, then rename);
the body is written before the JSON that points to it, so a reader never sees half an entry.
Only successful responses are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from .fetch import RawResponse
from .guard import normalised_url_str


def search_request(query: str, k: int) -> str:
    q = re.sub(r"\s+", " ", query.strip().lower())
    return f"search\n{q}\n{k}"


def fetch_request(url: str) -> str:
    return f"fetch\n{normalised_url_str(url)}"


def request_key(request: str) -> str:
    return hashlib.sha256(request.encode("utf-8")).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class WebCache:
    def __init__(self, root: Path, ttl: float = 24 * 3600.0) -> None:
        self.root = Path(root)
        self.ttl = ttl

    # --- generic ---------------------------------------------------------------------------
    def _path(self, kind: str, request: str, suffix: str = ".json") -> Path:
        return self.root / kind / f"{request_key(request)}{suffix}"

    def _load(self, kind: str, request: str, *, max_age: float | None) -> dict[str, Any] | None:
        path = self._path(kind, request)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if entry.get("request") != request:  # a hash collision or a hand-edited file
            return None
        if max_age is not None and time.time() - float(entry.get("stored_at", 0)) > max_age:
            return None
        return entry

    # --- searches ----------------------------------------------------------------------------
    def get_search(self, query: str, k: int, *, max_age: float | None) -> list[dict[str, str]] | None:
        entry = self._load("search", search_request(query, k), max_age=max_age)
        return None if entry is None else list(entry.get("results", []))

    def put_search(self, query: str, k: int, results: list[dict[str, str]]) -> None:
        request = search_request(query, k)
        entry = {"request": request, "stored_at": time.time(), "query": query, "k": k, "results": results}
        _atomic_write(self._path("search", request), json.dumps(entry, ensure_ascii=False, indent=1).encode("utf-8"))

    # --- fetches -----------------------------------------------------------------------------
    def get_fetch(self, url: str, *, max_age: float | None) -> RawResponse | None:
        request = fetch_request(url)
        entry = self._load("fetch", request, max_age=max_age)
        if entry is None:
            return None
        try:
            body = (self._path("fetch", request, "").parent / entry["body"]).read_bytes()
        except (OSError, KeyError, TypeError):
            return None
        if hashlib.sha256(body).hexdigest() != entry.get("body_sha256", hashlib.sha256(body).hexdigest()):
            return None
        return RawResponse(
            url=entry["url"],
            requested_url=entry.get("requested_url", url),
            status=int(entry.get("status", 200)),
            content_type=entry.get("content_type", ""),
            charset=entry.get("charset"),
            body=body,
            redirects=list(entry.get("redirects", [])),
            private=bool(entry.get("private", False)),
            fetched_at=float(entry.get("stored_at", 0)),
        )

    def put_fetch(self, url: str, raw: RawResponse) -> None:
        request = fetch_request(url)
        json_path = self._path("fetch", request)
        body_name = f"{request_key(request)}.body"
        _atomic_write(json_path.parent / body_name, raw.body)
        entry = {
            "request": request,
            "stored_at": time.time(),
            "url": raw.url,
            "requested_url": raw.requested_url,
            "status": raw.status,
            "content_type": raw.content_type,
            "charset": raw.charset,
            "redirects": raw.redirects,
            "private": raw.private,
            "body": body_name,
            "body_sha256": hashlib.sha256(raw.body).hexdigest(),
            "body_bytes": len(raw.body),
        }
        _atomic_write(json_path, json.dumps(entry, ensure_ascii=False, indent=1).encode("utf-8"))
