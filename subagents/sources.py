"""The run-wide source registry: every passage an agent retrieved gets a stable id ("S1", "S2", …).

The same passage (same `key`) always maps to the same id within a run. `text` is exactly what
was shown to an agent, so the citation check verifies claims against retrieved text only.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable

from .storage import write_atomic


class SourceKind(StrEnum):
    CORPUS = "corpus"
    WEB = "web"


@dataclass
class Source:
    id: str
    key: str  # what identifies the passage: "corpus:<passage_id>" or "web:<url>#<n>"
    kind: SourceKind
    title: str
    locator: str  # passage id or URL a reader can follow
    text: str  # text shown to an agent (grows when the passage is read in full)
    retrieved_by: list[str] = field(default_factory=list)  # agent ids
    meta: dict[str, Any] = field(default_factory=dict)


# Told of every registration: the source as it now is, the text this call added (or ""), the agent.
SourceListener = Callable[[Source, str, str], None]


class SourceRegistry:
    """Thread-safe (tools may run in worker threads); ids are assigned in retrieval order.
    A `listener` hears every registration (a run records them as events, to rebuild the registry
    when it resumes)."""

    def __init__(self, listener: SourceListener | None = None) -> None:
        self._by_id: dict[str, Source] = {}
        self._by_key: dict[str, str] = {}
        self._lock = threading.Lock()
        self.listener = listener

    def register(
        self,
        *,
        key: str,
        kind: SourceKind | str,
        title: str,
        locator: str,
        text: str,
        agent_id: str = "",
        meta: dict[str, Any] | None = None,
    ) -> Source:
        """Add a passage, or update it: text only ever grows (a snippet becomes the full read)."""
        with self._lock:
            src, added, changed = self._put(None, key, kind, title, locator, text, agent_id, meta)
        if self.listener is not None and changed:
            self.listener(src, added, agent_id)
        return src

    def restore(self, *, source_id: str, key: str, kind: SourceKind | str, title: str, locator: str, text: str,
                agent_id: str = "", meta: dict[str, Any] | None = None) -> Source:
        """Replay a recorded registration with its id (a resumed run); the listener is not told."""
        with self._lock:
            return self._put(source_id, key, kind, title, locator, text, agent_id, meta)[0]

    def _put(self, source_id: str | None, key: str, kind: SourceKind | str, title: str, locator: str, text: str,
             agent_id: str, meta: dict[str, Any] | None) -> tuple[Source, str, bool]:
        added, changed = "", False
        sid = self._by_key.get(key)
        if sid is None:
            sid = source_id or self._next_id()
            src = Source(sid, key, SourceKind(kind), title, locator, text, [], dict(meta or {}))
            self._by_id[sid] = src
            self._by_key[key] = sid
            added, changed = text, True
        else:
            src = self._by_id[sid]
            if text and text not in src.text:
                src.text = f"{src.text}\n{text}" if src.text else text
                added, changed = text, True
            if meta and any(src.meta.get(k) != v for k, v in meta.items()):
                src.meta.update(meta)
                changed = True
        if agent_id and agent_id not in src.retrieved_by:
            src.retrieved_by.append(agent_id)
            changed = True
        return src, added, changed

    def _next_id(self) -> str:
        n = len(self._by_id) + 1
        while f"S{n}" in self._by_id:  # restored ids need not be dense
            n += 1
        return f"S{n}"

    def get(self, source_id: str) -> Source | None:
        return self._by_id.get(source_id)

    def __contains__(self, source_id: object) -> bool:
        return source_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def all(self) -> list[Source]:
        """Every source, in id order."""
        return list(self._by_id.values())

    def to_json(self) -> list[dict[str, Any]]:
        return [{**asdict(s), "kind": s.kind.value} for s in self._by_id.values()]

    @staticmethod
    def read(path: Path) -> list[Source]:
        """A saved registry (sources.json) read back."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Source(**{**d, "kind": SourceKind(d["kind"])}) for d in data]

    def save(self, path: Path, *, durable: bool = True) -> None:
        write_atomic(path, json.dumps(self.to_json(), indent=1, ensure_ascii=False), durable=durable)
