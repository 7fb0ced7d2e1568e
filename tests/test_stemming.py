"""The stemmer is shared by runs in threads (the Python API called from several threads)."""

from __future__ import annotations

import sys
import threading

from subagents.stemming import stem_word

WORDS = [f"{base}{suffix}" for base in ("align", "connect", "index", "generat", "replicat", "transact", "configur")
         for suffix in ("ing", "ed", "ations", "ational", "izes", "ically", "ments", "fulness")]


def test_stems_are_right_when_many_threads_stem_at_once() -> None:
    expected = {w: stem_word.__wrapped__(w) for w in WORDS}  # one thread, no memo
    wrong: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(offset: int) -> None:
        barrier.wait()
        try:
            for n in range(300):
                w = WORDS[(offset + n) % len(WORDS)] + "s" * (n % 7)  # new words defeat the memo
                got = stem_word.__wrapped__(w)
                if got != stem_word.__wrapped__(w) or (w in expected and got != expected[w]):
                    wrong.append((w, got))
        except Exception as e:  # noqa: BLE001 — a shared stemmer fails with IndexError
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(i * 5,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors and not wrong
    assert stem_word("aligned") == "align" and stem_word("connections") == "connect"
