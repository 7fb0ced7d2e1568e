"""Text bound for a terminal. Corpus and web text (and model output) may hold control and escape
sequences (ESC, BEL, CSI, OSC, carriage returns, bidi overrides) that a terminal would obey:
`neutralise` shows them as visible escapes instead. Files keep the text as it was; only what is
printed is neutralised. Tab and newline are kept."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, bidi embeddings/overrides/isolates, lone surrogates
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# in a question only tab and newline are allowed (CRLF line ends are read as newlines)
_QUESTION_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def neutralise(text: str) -> str:
    """`text` with every character a terminal could act on shown as `\\xNN` / `\\uNNNN`."""
    return _UNSAFE.sub(_visible, text)


def question_problem(question: str) -> str | None:
    """Why `question` cannot be researched as text (None when it can); never echoes the bad character."""
    m = _SURROGATE.search(question)
    if m:  # undecodable bytes from the command line arrive as lone surrogates
        return f"the question is not valid UTF-8 (an undecodable byte at character {m.start() + 1})"
    m = _QUESTION_CONTROL.search(question.replace("\r\n", "\n"))
    if m:
        return (f"the question contains a control character (U+{ord(m.group()):04X} at character {m.start() + 1}); "
                "only tab and newline are allowed")
    return None
