"""PDFs laid out like a typeset manual, for the PDF corpus reader's tests: text runs placed at
given positions in a body, bold or monospaced standard font and a given size, with an optional
outline (bookmarks), document title and password. Written by hand (the drawing operators a TeX or
Word PDF uses: `Tf`, `Tm`, `Tj`), then given its outline and encryption by pypdf's writer."""

from __future__ import annotations

import io
from dataclasses import dataclass

FONTS = {"body": "Helvetica", "bold": "Helvetica-Bold", "mono": "Courier", "italic": "Helvetica-Oblique"}
PAGE_HEIGHT = 792


@dataclass(frozen=True)
class Run:
    text: str
    x: float
    y: float
    size: float = 10.0
    font: str = "body"  # a key of FONTS


@dataclass(frozen=True)
class Bookmark:
    title: str
    page: int  # 1-based
    top: float | None = None
    children: tuple["Bookmark", ...] = ()


def lines(x: float, top: float, texts: list[str], *, size: float = 10.0, font: str = "body",
          leading: float = 12.0) -> list[Run]:
    """One run per text, each on the line below the last."""
    return [Run(t, x, top - i * leading, size, font) for i, t in enumerate(texts)]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def layout_pdf(pages: list[list[Run]], *, bookmarks: tuple[Bookmark, ...] = (), title: str | None = None,
               password: str | None = None, size_in_matrix: bool = False) -> bytes:
    """`size_in_matrix`: each run's size in its text matrix, the font set at size 1 (as Word and browsers write)."""
    names = list(FONTS)
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    font_ids = {}
    for key in names:
        objects.append(f"<< /Type /Font /Subtype /Type1 /BaseFont /{FONTS[key]} /Encoding /WinAnsiEncoding >>".encode())
        font_ids[key] = len(objects)
    fonts = " ".join(f"/F{i} {font_ids[k]} 0 R" for i, k in enumerate(names))
    page_ids = []
    for runs in pages:
        ops = []
        for r in runs:
            tf, tm = (1, f"{r.size:g} 0 0 {r.size:g}") if size_in_matrix else (r.size, "1 0 0 1")
            ops.append(f"BT /F{names.index(r.font)} {tf:g} Tf {tm} {r.x:g} {r.y:g} Tm ({_escape(r.text)}) Tj ET")
        stream = "\n".join(ops).encode("cp1252")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content = len(objects)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 {PAGE_HEIGHT}] "
                       f"/Resources << /Font << {fonts} >> >> /Contents {content} 0 R >>".encode())
        page_ids.append(len(objects))
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {len(pages)} >>".encode()
    out = serialize(objects)
    if not bookmarks and title is None and password is None:
        return out
    return _finish(out, bookmarks, title, password)


def serialize(objects: list[bytes], info_id: int | None = None) -> bytes:
    """A PDF file of numbered objects (the first the catalog) with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    info = f" /Info {info_id} 0 R" if info_id is not None else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _finish(data: bytes, bookmarks: tuple[Bookmark, ...], title: str | None, password: str | None) -> bytes:
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import Fit

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))

    def add(marks: tuple[Bookmark, ...], parent: object = None) -> None:
        for m in marks:
            fit = Fit.xyz(left=72, top=m.top) if m.top is not None else Fit.fit()
            item = writer.add_outline_item(title=m.title, page_number=m.page - 1, parent=parent, fit=fit)
            add(m.children, item)

    add(bookmarks)
    if title is not None:
        writer.add_metadata({"/Title": title})
    if password is not None:
        writer.encrypt(password, algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()
