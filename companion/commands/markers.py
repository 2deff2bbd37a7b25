"""``markers``: print the four ArUco corner markers (DICT_4X4_50, ids 0-3) at a stated size.

``--out sheet.pdf`` writes a vector A4 PDF (exact millimetres, no fonts or images embedded
beyond the PDF base fonts); ``--out sheet.png`` a raster sheet at ``--dpi``.  Both carry the
placement instructions.
"""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "markers"
HELP = "write the 4 ArUco corner markers with placement instructions (--out sheet.pdf|sheet.png)"
A4_MM = (210.0, 297.0)
PT_PER_MM = 72.0 / 25.4
PLACES = {
    0: "far left corner (across the table, on player 1's left)",
    1: "far right corner (across the table, on player 1's right)",
    2: "near right corner (player 1's right hand)",
    3: "near left corner (player 1's left hand)",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, metavar="FILE", help="output file: .pdf or .png")
    p.add_argument("--size-mm", type=float, help="side of each marker's black square (default: the layout's marker_mm)")
    p.add_argument("--layout", default="siamese-2", help="layout whose table size and marker size to state")
    p.add_argument("--dpi", type=int, default=300, help="resolution of a PNG sheet (default 300)")


def instructions(size_mm: float, table_mm: tuple[float, float]) -> list[str]:
    w, h = table_mm
    lines = [
        f"Siamese companion corner markers: ArUco DICT_4X4_50, ids 0-3, black square {size_mm:g} mm.",
        "Print at 100% (no 'fit to page'); check the black square measures the size above.",
        f"Place each marker's CENTRE on a corner of the play area, {w:g} x {h:g} mm apart,",
        "printed side up, the id label towards player 1 (the near edge):",
    ]
    lines += [f"  id {i}: {place}" for i, place in PLACES.items()]
    lines.append("Keep the white margin around each marker visible; tape flat.")
    return lines


def _positions(size_mm: float) -> list[list[tuple[int, float, float]]]:
    """Pages of (id, x, y) top-left corners of each marker in page millimetres (y down)."""
    cell = size_mm + 24.0
    if 2 * cell <= A4_MM[0] - 10 and 2 * cell + 70 <= A4_MM[1]:
        x0 = (A4_MM[0] - 2 * cell) / 2 + 12
        return [[(i, x0 + (i % 2) * cell, 75 + (i // 2) * (cell + 8)) for i in range(4)]]
    if size_mm + 24 > A4_MM[0] - 10:
        raise ValueError(f"--size-mm {size_mm:g} does not fit on an A4 page (at most {A4_MM[0] - 34:g})")
    return [[(i, (A4_MM[0] - size_mm) / 2, 80.0)] for i in range(4)]


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _page_stream(items: list[tuple[int, float, float]], size_mm: float, lines: list[str]) -> bytes:
    from vision.calibrate import marker_bits

    k, page_h = PT_PER_MM, A4_MM[1] * PT_PER_MM
    ops = ["0 g"]
    for n, line in enumerate(lines):
        ops.append(f"BT /F1 9 Tf {15 * k:.2f} {page_h - (15 + 5 * n) * k:.2f} Td ({_pdf_escape(line)}) Tj ET")
    module = size_mm / 6
    for mid, x, y in items:
        bits = marker_bits(mid)
        for r in range(6):
            for c in range(6):
                if bits[r, c] == 0:
                    px, py = (x + c * module) * k, page_h - (y + (r + 1) * module) * k
                    ops.append(f"{px:.3f} {py:.3f} {module * k:.3f} {module * k:.3f} re f")
        ops.append(f"BT /F1 11 Tf {x * k:.2f} {page_h - (y + size_mm + 8) * k:.2f} Td (id {mid}) Tj ET")
        ops.append(f"0.5 w {(x - 6) * k:.2f} {page_h - (y + size_mm + 12) * k:.2f} "
                   f"{(size_mm + 12) * k:.2f} {(size_mm + 18) * k:.2f} re S")
    return "\n".join(ops).encode("ascii")


def write_pdf(path: Path, size_mm: float, lines: list[str]) -> None:
    """A minimal PDF 1.4: one content stream of filled squares and base-font text per page."""
    pages = _positions(size_mm)
    objs: list[bytes] = [b"", b""]  # 1: catalog, 2: pages (filled below)
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")  # 3
    kids = []
    w, h = (v * PT_PER_MM for v in A4_MM)
    for items in pages:
        stream = _page_stream(items, size_mm, lines)
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content = len(objs)
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w:.2f} {h:.2f}] "
                    f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>".encode())
        kids.append(f"{len(objs)} 0 R")
    objs[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>".encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def write_png(path: Path, size_mm: float, lines: list[str], dpi: int) -> None:
    import cv2
    import numpy as np

    from vision.calibrate import marker_image

    px = dpi / 25.4
    side = int(round(size_mm * px))
    cell = side + int(24 * px)
    width = max(2 * cell + int(20 * px), int(180 * px))
    top = int((15 + 5 * len(lines)) * px)
    height = top + 2 * (cell + int(10 * px))
    sheet = np.full((height, width), 255, np.uint8)
    scale = max(0.4, px / 8)
    for n, line in enumerate(lines):
        cv2.putText(sheet, line, (int(10 * px), int((12 + 5 * n) * px)), cv2.FONT_HERSHEY_SIMPLEX, scale, 0, max(1, int(px / 5)))
    for i in range(4):
        x = int(12 * px) + (i % 2) * cell
        y = top + (i // 2) * (cell + int(10 * px))
        sheet[y : y + side, x : x + side] = marker_image(i, side)
        cv2.putText(sheet, f"id {i}", (x, y + side + int(8 * px)), cv2.FONT_HERSHEY_SIMPLEX, scale * 1.2, 0, max(1, int(px / 4)))
    if not cv2.imwrite(str(path), sheet):
        raise OSError(f"cannot write {str(path)!r}")


def run(args: argparse.Namespace) -> int:
    from vision.layout import load_layout

    layout = load_layout(args.layout)
    size = float(args.size_mm or layout.marker_mm)
    if not 10 <= size <= 180:
        raise ValueError(f"--size-mm must be between 10 and 180, got {size:g}")
    if args.dpi < 72 or args.dpi > 1200:
        raise ValueError(f"--dpi must be between 72 and 1200, got {args.dpi}")
    out = Path(args.out)
    lines = instructions(size, layout.table_mm)
    suffix = out.suffix.lower()
    if suffix == ".pdf":
        write_pdf(out, size, lines)
    elif suffix == ".png":
        write_png(out, size, lines, args.dpi)
    else:
        raise ValueError(f"--out must end in .pdf or .png, got {args.out!r}")
    print(f"wrote {out}: markers 0-3, {size:g} mm; " + lines[2].strip())
    return 0
