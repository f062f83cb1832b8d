"""py_oracle.py - CPython's side of the Python differential fuzzer
(tests/fuzz/diff/diff_common.h has the protocol).

For each source: does CPython compile it the way the runner does (bytes, so
the coding cookie and BOM rules apply, as importlib's source loader reads
main.py)? If not, the job could not run: "runtime-rejects". Otherwise the
summary of CPython's ast (identifiers, attribute names, calls, string
literals) is compared with the one the harness made from tree-sitter's tree;
tree-sitter's string literals arrive as source text and are evaluated here by
CPython itself. Any difference is "differs" with what differs.
"""
import ast
import json
import struct
import sys
import unicodedata
from collections import Counter

sys.setrecursionlimit(10000)


def read_frame(f):
    head = f.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack("<I", head)
    data = f.read(n)
    if len(data) < n:
        return None
    return data


def write_frame(f, obj):
    data = json.dumps(obj).encode()
    f.write(struct.pack("<I", len(data)) + data)


def names_of(node):
    """Identifiers CPython keeps as plain strings in node's fields."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg] if node.arg else []
    if isinstance(node, ast.alias):
        return node.name.split(".") + ([node.asname] if node.asname else [])
    if isinstance(node, ast.ImportFrom):
        return node.module.split(".") if node.module else []
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler):
        return [node.name] if node.name else []
    if isinstance(node, (ast.MatchAs, ast.MatchStar)):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    if isinstance(node, ast.MatchClass):
        return list(node.kwd_attrs)
    return []


def summarise(tree):
    ids, attrs, strs, calls = [], [], [], 0
    in_joined = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            in_joined.update(id(v) for v in node.values)
        ids.extend(names_of(node))
        if isinstance(node, ast.Attribute):
            attrs.append(node.attr)
        elif isinstance(node, ast.Call):
            calls += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            if id(node) not in in_joined:
                strs.append(repr(node.value))
    return ids, attrs, calls, strs


def diff_lists(what, mine, theirs):
    a, b = Counter(mine), Counter(theirs)
    if a == b:
        return None
    return "%s: cpython only %s, tree-sitter only %s" % (
        what, sorted((a - b).elements()), sorted((b - a).elements()))


def judge(src, summary):
    try:
        compile(src, "main.py", "exec", dont_inherit=True)
        tree = ast.parse(src, "main.py")
    except Exception as e:  # noqa: BLE001 - whatever stops compile() stops the job
        return {"verdict": "runtime-rejects", "detail": "%s: %s" % (type(e).__name__, e)}
    ts = json.loads(summary)
    ids, attrs, calls, strs = summarise(tree)
    ts_strs = []
    for text in ts["strs"]:
        try:
            ts_strs.append(repr(ast.literal_eval("(" + text + "\n)")))
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            return {"verdict": "differs",
                    "detail": "tree-sitter string %r is not a literal for CPython: %s" % (text, e)}
    # CPython reads identifiers through NFKC (PEP 3131), and so does the
    # analyzer before any rule looks at a name (policies/README.md): compare
    # tree-sitter's identifiers the same way
    nfkc = [unicodedata.normalize("NFKC", x) for x in ts["ids"]]
    nfkc_attrs = [unicodedata.normalize("NFKC", x) for x in ts["attrs"]]
    problems = [p for p in (
        diff_lists("identifiers", ids, nfkc),
        diff_lists("attributes", attrs, nfkc_attrs),
        None if calls == ts["calls"] else "calls: cpython %d, tree-sitter %d" % (calls, ts["calls"]),
        diff_lists("strings", strs, ts_strs),
    ) if p]
    if problems:
        return {"verdict": "differs", "detail": "; ".join(problems)}
    return {"verdict": "same", "detail": ""}


def main():
    fin, fout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        src = read_frame(fin)
        summary = read_frame(fin) if src is not None else None
        if summary is None:
            return
        write_frame(fout, judge(src, summary))
        # the harness sends a batch, then reads every reply: flush when no
        # more input is waiting would need select(); flushing each reply is cheap
        fout.flush()


if __name__ == "__main__":
    main()
