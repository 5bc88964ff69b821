"""What the campaign does to an input file: bytes flipped or inserted, lines deleted,
duplicated, swapped or shuffled, fields dropped, added or made odd, numbers made odd,
re-encodings, truncation, compression, emptiness; JSON gets lone surrogates, deep nesting, huge
numbers and other types; an index folder loses or damages a file."""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
import re
from pathlib import Path

from .options import ODD_NUMBERS, ODD_TEXT

def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _num_re():
    return re.compile(rb"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def mutate_bytes(rng: random.Random, data: bytes, is_json: bool) -> tuple[bytes, str]:
    ops = ["flip", "insert_nul", "insert_ff", "del_line", "dup_line", "swap_lines", "shuffle",
           "drop_field", "add_field", "odd_field", "odd_number", "utf16", "latin1", "bom",
           "crlf", "no_final_newline", "truncate", "gzip", "gzip_truncated", "bz2", "xz", "zstd",
           "empty", "spaces", "long_line", "blank_lines", "comment_lines", "tabs_spaces"]
    if is_json:
        ops += ["surrogate", "deep", "huge_number", "json_type", "surrogate", "json_truncate"]
    op = rng.choice(ops)
    lines = _lines(data)
    n = len(lines)
    i = rng.randrange(max(n - 1, 1))
    if op == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 5)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), op
    if op in ("insert_nul", "insert_ff"):
        pos = rng.randrange(len(data) + 1)
        return data[:pos] + (b"\x00" if op == "insert_nul" else b"\xff\xfe") + data[pos:], op
    if op == "del_line":
        return b"\n".join(lines[:i] + lines[i + 1:]), op
    if op == "dup_line":
        return b"\n".join(lines[:i + 1] + lines[i:]), op
    if op == "swap_lines":
        j = rng.randrange(max(n - 1, 1))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines), op
    if op == "shuffle":
        body = lines[:-1] if lines and lines[-1] == b"" else lines
        rng.shuffle(body)
        return b"\n".join(body) + b"\n", op
    if op in ("drop_field", "add_field", "odd_field", "tabs_spaces"):
        line = lines[i]
        sep = b"\t" if b"\t" in line else b" "
        fields = line.split(sep)
        k = rng.randrange(len(fields))
        if op == "drop_field":
            del fields[k]
        elif op == "add_field":
            fields.insert(k, b"extra")
        elif op == "tabs_spaces":
            sep = b" \t" if sep == b"\t" else b"\t"
        else:
            fields[k] = rng.choice(ODD_NUMBERS + ODD_TEXT[:12]).encode("utf-8", "surrogatepass")
        lines[i] = sep.join(fields)
        return b"\n".join(lines), f"{op}@{i + 1}"
    if op == "odd_number":
        matches = list(_num_re().finditer(data))
        if not matches:
            return data + b"\n1e309\n", op
        m = rng.choice(matches)
        odd = rng.choice(ODD_NUMBERS).encode()
        return data[:m.start()] + odd + data[m.end():], f"{op}:{odd.decode()}"
    if op == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16"), op
    if op == "latin1":
        text = data.decode("utf-8", "replace").replace("e", "é", 3)
        return text.encode("latin-1", "replace"), op
    if op == "bom":
        return b"\xef\xbb\xbf" + data, op
    if op == "crlf":
        return data.replace(b"\n", b"\r\n"), op
    if op == "no_final_newline":
        return data.rstrip(b"\n"), op
    if op == "truncate":
        return data[:rng.randrange(len(data) + 1)], op
    if op == "gzip":
        return gzip.compress(data), op
    if op == "gzip_truncated":
        z = gzip.compress(data)
        return z[:rng.randrange(2, max(len(z) - 1, 3))], op
    if op == "bz2":
        return bz2.compress(data), op
    if op == "xz":
        return lzma.compress(data), op
    if op == "zstd":
        return b"\x28\xb5\x2f\xfd" + data[:100], op
    if op == "empty":
        return b"", op
    if op == "spaces":
        return b" \n\t\n  \n", op
    if op == "long_line":
        return data + b"x" * rng.choice([70000, 2_000_000]) + b"\n", op
    if op == "blank_lines":
        return b"\n\n" + data.replace(b"\n", b"\n\n", 5), op
    if op == "comment_lines":
        return b"# a comment\n" + data, op
    if op == "surrogate":
        m = re.search(rb'"([^"\\]{1,40})"', data[rng.randrange(max(len(data) // 2, 1)):])
        if not m:
            return data, op
        start = data.find(m.group(0))
        return data[:start] + b'"\\ud800"' + data[start + len(m.group(0)):], op
    if op == "deep":
        return b"[" * 100000 + b"]" * 100000, op
    if op == "huge_number":
        return re.sub(rb"\d+", b"1" + b"0" * 400, data, count=3), op
    if op == "json_type":
        return rng.choice([b"[]", b"{}", b"null", b"42", b'"x"', b"[1,2]", b'{"a": []}']), op
    if op == "json_truncate":
        return data[:len(data) // 2], op
    return data, op


def damage_index(rng: random.Random, folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if not files:
        return "none"
    f = rng.choice(files)
    op = rng.choice(["delete", "empty", "truncate", "flip", "json_byte", "append"])
    rel = f.relative_to(folder)
    data = f.read_bytes()
    if op == "delete":
        f.unlink()
    elif op == "empty":
        f.write_bytes(b"")
    elif op == "truncate":
        f.write_bytes(data[:rng.randrange(len(data) + 1)])
    elif op == "flip":
        b = bytearray(data)
        if b:
            b[rng.randrange(len(b))] ^= 0xFF
        f.write_bytes(bytes(b))
    elif op == "json_byte":
        b = bytearray(data)
        if b:
            b[rng.randrange(len(b))] = ord(rng.choice("{}[],:\"x\xff"[:8]))
        f.write_bytes(bytes(b))
    else:
        f.write_bytes(data + b"garbage\n")
    return f"index:{op}:{rel}"
