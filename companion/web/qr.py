"""A small self-written QR code encoder (byte mode, error correction M, versions 1-10) to SVG.

Written here because no QR library is installed and the pairing URL is short (<= 213 bytes).
It follows ISO/IEC 18004 as explained by Project Nayuki's "QR Code generator library"; the tests
decode its output with OpenCV's ``QRCodeDetector``.
"""

from __future__ import annotations

from collections.abc import Callable

# per version 1..10, error correction level M
ECC_PER_BLOCK = (0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26)
NUM_BLOCKS = (0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5)
ECL_M_BITS = 0
Grid = list[list[bool]]


def _gf_mul(x: int, y: int) -> int:
    z = 0
    for i in reversed(range(8)):
        z = (z << 1) ^ ((z >> 7) * 0x11D)
        z ^= ((y >> i) & 1) * x
    return z


def _rs_divisor(degree: int) -> list[int]:
    result = [0] * (degree - 1) + [1]
    root = 1
    for _ in range(degree):
        for j in range(len(result)):
            result[j] = _gf_mul(result[j], root)
            if j + 1 < len(result):
                result[j] ^= result[j + 1]
        root = _gf_mul(root, 0x02)
    return result


def _rs_remainder(data: list[int], divisor: list[int]) -> list[int]:
    result = [0] * len(divisor)
    for b in data:
        factor = b ^ result.pop(0)
        result.append(0)
        for i, coef in enumerate(divisor):
            result[i] ^= _gf_mul(coef, factor)
    return result


def _raw_modules(ver: int) -> int:
    result = (16 * ver + 128) * ver + 64
    if ver >= 2:
        n = ver // 7 + 2
        result -= (25 * n - 10) * n - 55
        if ver >= 7:
            result -= 36
    return result


def _data_capacity(ver: int) -> int:
    return _raw_modules(ver) // 8 - ECC_PER_BLOCK[ver] * NUM_BLOCKS[ver]


def _align_positions(ver: int) -> list[int]:
    if ver == 1:
        return []
    n = ver // 7 + 2
    size = ver * 4 + 17
    step = (ver * 4 + n * 2 + 1) // (n * 2 - 2) * 2
    out = [size - 7 - i * step for i in range(n - 1)]
    return [6] + sorted(out)


def _codewords(data: bytes, ver: int) -> list[int]:
    bits: list[int] = []

    def put(value: int, n: int) -> None:
        bits.extend((value >> i) & 1 for i in reversed(range(n)))

    put(0b0100, 4)
    put(len(data), 8 if ver < 10 else 16)
    for b in data:
        put(b, 8)
    cap = _data_capacity(ver) * 8
    put(0, min(4, cap - len(bits)))
    put(0, (-len(bits)) % 8)
    words = [int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8)]
    pad = 0xEC
    while len(words) < _data_capacity(ver):
        words.append(pad)
        pad ^= 0xEC ^ 0x11
    return _interleave(words, ver)


def _interleave(words: list[int], ver: int) -> list[int]:
    nblocks, ecc_len = NUM_BLOCKS[ver], ECC_PER_BLOCK[ver]
    raw = _raw_modules(ver) // 8
    short = nblocks - raw % nblocks
    short_len = raw // nblocks
    div = _rs_divisor(ecc_len)
    blocks, k = [], 0
    for i in range(nblocks):
        dat = words[k:k + short_len - ecc_len + (0 if i < short else 1)]
        k += len(dat)
        ecc = _rs_remainder(dat, div)
        if i < short:
            dat = dat + [0]
        blocks.append(dat + ecc)
    out = []
    for i in range(len(blocks[0])):
        for j, blk in enumerate(blocks):
            if i != short_len - ecc_len or j >= short:
                out.append(blk[i])
    return out


class _Matrix:
    def __init__(self, ver: int) -> None:
        self.ver = ver
        self.size = ver * 4 + 17
        self.mod: Grid = [[False] * self.size for _ in range(self.size)]
        self.func: Grid = [[False] * self.size for _ in range(self.size)]

    def set(self, x: int, y: int, dark: bool) -> None:
        self.mod[y][x] = dark
        self.func[y][x] = True

    def draw_function_patterns(self) -> None:
        s = self.size
        for i in range(s):
            self.set(6, i, i % 2 == 0)
            self.set(i, 6, i % 2 == 0)
        for cx, cy in ((3, 3), (s - 4, 3), (3, s - 4)):
            for dy in range(-4, 5):
                for dx in range(-4, 5):
                    x, y = cx + dx, cy + dy
                    if 0 <= x < s and 0 <= y < s:
                        self.set(x, y, max(abs(dx), abs(dy)) not in (2, 4))
        pos = _align_positions(self.ver)
        last = len(pos) - 1
        for i, ax in enumerate(pos):
            for j, ay in enumerate(pos):
                if (i, j) in ((0, 0), (0, last), (last, 0)):
                    continue
                for dy in range(-2, 3):
                    for dx in range(-2, 3):
                        self.set(ax + dx, ay + dy, max(abs(dx), abs(dy)) != 1)
        self.draw_format(0)
        if self.ver >= 7:
            rem = self.ver
            for _ in range(12):
                rem = (rem << 1) ^ ((rem >> 11) * 0x1F25)
            bits = self.ver << 12 | rem
            for i in range(18):
                bit = (bits >> i) & 1 == 1
                a, b = s - 11 + i % 3, i // 3
                self.set(a, b, bit)
                self.set(b, a, bit)

    def draw_format(self, mask: int) -> None:
        data = ECL_M_BITS << 3 | mask
        rem = data
        for _ in range(10):
            rem = (rem << 1) ^ ((rem >> 9) * 0x537)
        bits = (data << 10 | rem) ^ 0x5412
        s = self.size

        def bit(i: int) -> bool:
            return (bits >> i) & 1 == 1

        for i in range(6):
            self.set(8, i, bit(i))
        self.set(8, 7, bit(6))
        self.set(8, 8, bit(7))
        self.set(7, 8, bit(8))
        for i in range(9, 15):
            self.set(14 - i, 8, bit(i))
        for i in range(8):
            self.set(s - 1 - i, 8, bit(i))
        for i in range(8, 15):
            self.set(8, s - 15 + i, bit(i))
        self.set(8, s - 8, True)

    def draw_codewords(self, words: list[int]) -> None:
        s, i, right = self.size, 0, self.size - 1
        total = len(words) * 8
        while right >= 1:
            if right == 6:
                right = 5
            for vert in range(s):
                for j in range(2):
                    x = right - j
                    y = s - 1 - vert if ((right + 1) & 2) == 0 else vert
                    if not self.func[y][x] and i < total:
                        self.mod[y][x] = (words[i >> 3] >> (7 - (i & 7))) & 1 == 1
                        i += 1
            right -= 2


MASKS: tuple[Callable[[int, int], bool], ...] = (
    lambda x, y: (x + y) % 2 == 0,
    lambda x, y: y % 2 == 0,
    lambda x, y: x % 3 == 0,
    lambda x, y: (x + y) % 3 == 0,
    lambda x, y: (x // 3 + y // 2) % 2 == 0,
    lambda x, y: x * y % 2 + x * y % 3 == 0,
    lambda x, y: (x * y % 2 + x * y % 3) % 2 == 0,
    lambda x, y: ((x + y) % 2 + x * y % 3) % 2 == 0,
)


def _penalty(g: Grid) -> int:
    """Runs of 5+, 2x2 blocks and dark/light balance (the finder-like rule is left out)."""
    n, score = len(g), 0
    for line in g + [list(col) for col in zip(*g, strict=True)]:
        run = 1
        for a, b in zip(line, line[1:], strict=False):
            run = run + 1 if a == b else 1
            score += 3 if run == 5 else (1 if run > 5 else 0)
    for y in range(n - 1):
        for x in range(n - 1):
            if g[y][x] == g[y][x + 1] == g[y + 1][x] == g[y + 1][x + 1]:
                score += 3
    dark = sum(map(sum, g))
    score += abs(dark * 20 - n * n * 10) // (n * n) * 10
    return score


def encode(text: str) -> Grid:
    """The module grid (True = dark) of ``text`` as the smallest version 1-10 QR code, level M."""
    data = text.encode("utf-8")
    ver = next((v for v in range(1, 11) if 4 + (8 if v < 10 else 16) + 8 * len(data)
                <= _data_capacity(v) * 8), None)
    if ver is None:
        raise ValueError(f"text too long for a version-10 QR code: {len(data)} bytes")
    best: tuple[int, Grid] | None = None
    words = _codewords(data, ver)
    for mask, fn in enumerate(MASKS):
        m = _Matrix(ver)
        m.draw_function_patterns()
        m.draw_codewords(words)
        for y in range(m.size):
            for x in range(m.size):
                if not m.func[y][x] and fn(x, y):
                    m.mod[y][x] = not m.mod[y][x]
        m.draw_format(mask)
        p = _penalty(m.mod)
        if best is None or p < best[0]:
            best = (p, m.mod)
    assert best is not None
    return best[1]


def qr_svg(text: str, scale: int = 6, border: int = 4) -> str:
    grid = encode(text)
    n = len(grid) + 2 * border
    rects = "".join(f"M{x + border},{y + border}h1v1h-1z" for y, row in enumerate(grid)
                    for x, dark in enumerate(row) if dark)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {n} {n}" width="{n * scale}" '
            f'height="{n * scale}" shape-rendering="crispEdges"><rect width="100%" height="100%" '
            f'fill="#fff"/><path d="{rects}" fill="#000"/></svg>')
