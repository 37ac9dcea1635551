"""Which legacy encodings do real files need? The evidence for (not) sniffing more of them.

Why (helper leftovers68c, usage77's note): the loader (``treehop.ingest.loaders.decode_how``)
reads UTF-8, UTF-16 *with* a BOM, and else a legacy 8-bit text as Windows-1252; UTF-16
without a BOM stays binary, and a mostly-ASCII Shift-JIS file is read as Windows-1252. Two
cheap detections were proposed: UTF-16 by its NUL bytes on every other position, and
Shift-JIS / EUC-JP where the bytes are valid multi-byte sequences. This walks a tree of real
files (a ``.gz`` read decompressed, as the loader reads a Debian doc folder; files over
1 MB skipped) and prints:

* each file whose first 8 KiB have NULs on one parity only (over 40% of those positions, under
  5% of the others): what a UTF-16-without-BOM sniffer would take as text;
* for each file the loader reads as Windows-1252, whether it decodes *strictly* as
  Shift-JIS, CP932, EUC-JP, GB18030, Big5 or EUC-KR (and with how many CJK characters):
  what a validity sniffer would read as that encoding instead.

    python bench/survey_text_encodings.py /work/benchcache/debian     # 46,709 files, ~6 min

(bench/README.md "(helper leftovers68c)" has the numbers.)
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retrieval"))

from treehop.ingest.loaders import decode_how

CJK = ("shift_jis", "cp932", "euc_jp", "gb18030", "big5", "euc_kr")


def _read(path: str) -> bytes | None:
    try:
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > 1_000_000:
            return None
        data = Path(path).read_bytes()
        return gzip.decompress(data) if path.endswith(".gz") else data
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def _one_parity_nuls(data: bytes) -> bool:
    head = data[:8192]
    even, odd, half = head[0::2].count(0), head[1::2].count(0), len(head) // 2
    return (odd > 0.4 * half and even < 0.05 * half) or (even > 0.4 * half and odd < 0.05 * half)


def _cjk_chars(data: bytes, encoding: str) -> int | None:
    try:
        return sum(1 for c in data.decode(encoding) if ord(c) > 0x2FFF)
    except UnicodeDecodeError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("roots", nargs="+", help="folders to walk")
    args = ap.parse_args()
    seen, utf16, cp1252 = 0, [], 0
    strict: Counter[str] = Counter()
    for root in args.roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                data = _read(path)
                if data is None:
                    continue
                seen += 1
                if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
                    if len(data) >= 4 and _one_parity_nuls(data):
                        utf16.append(path)
                    continue
                text, as_cp1252 = decode_how(data)
                if text is None or not as_cp1252:
                    continue
                cp1252 += 1
                found = {enc: _cjk_chars(data, enc) for enc in CJK}
                strict.update(enc for enc, n in found.items() if n)
                if any(found.values()):
                    print(f"  read as cp1252, valid as {found}: {path}")
    print(f"files read: {seen:,}")
    print(f"NULs on one parity (UTF-16 without BOM?): {len(utf16)}")
    for path in utf16:
        print(f"  {path}")
    print(f"read as Windows-1252: {cp1252}")
    for enc in CJK:
        print(f"  of them valid {enc} with CJK characters: {strict[enc]}")


if __name__ == "__main__":
    main()
