"""attacks89's hostile client of ``treehop mcp`` (bench/README.md "(helper attacks89)"): builds a
fresh index of the devops sample (MiniLM) at ``$ATTACKS89_INDEX`` (default /tmp/attacks89/idx),
starts the real server, sends 1,040 hostile tool calls and 21 protocol-level requests, checks
each answer (JSON-RPC 2.0, its id, one of result / error, no traceback, no piece of a key) and
stderr; prints what broke. ``EXTRAS_ONLY=1``: the protocol-level requests only.

    PYTHONPATH=retrieval:tests python bench/attacks89_mcp_attack.py
"""

# ruff: noqa
import json, subprocess, sys, threading, os
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pathlib import Path
from vendor_keys import vendor_key, VENDOR_KINDS
from treehop import Treehop
from treehop.embedders.local_minilm import MiniLMEmbedder
from treehop_test_doubles import SAMPLE_TREE

idx = Path(os.environ.get("ATTACKS89_INDEX", "/tmp/attacks89/idx"))
import shutil

shutil.rmtree(idx, ignore_errors=True)
if not idx.exists():
    with Treehop(idx, embedder=MiniLMEmbedder()) as c:
        c.add_resource(
            SAMPLE_TREE / "resources" / "devops",
            target_uri="viking://resources/devops",
            tags=["ops"],
            metadata={"team": "infra"},
        )
        c.add_resource(
            "To deploy a soup, roll the pot out slowly.",
            target_uri="viking://resources/notes/soup",
            tags=["kitchen"],
            metadata={"team": "food"},
            is_text=True,
        )

argv = [sys.executable, "-m", "treehop", "--index", str(idx), "mcp"] + sys.argv[1:]
proc = subprocess.Popen(
    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(str(idx) + ".stderr.txt", "wb")
)


def send(m):
    proc.stdin.write((m if isinstance(m, (bytes,)) else json.dumps(m).encode()) + b"\n")
    proc.stdin.flush()


def answer(wait=120):
    got = []
    t = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(wait)
    assert got and got[0], "no answer"
    return got[0]


send(
    {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"},
        },
    }
)
print(answer()[:200])
send({"jsonrpc": "2.0", "method": "notifications/initialized"})

keys = [vendor_key(k, 7) for k in VENDOR_KINDS]
K = keys[1]
hostile_vals = [
    None,
    True,
    False,
    -1,
    0,
    2**70,
    -(2**70),
    1e308,
    float("nan") if False else "NaN",
    2.5,
    "3",
    [],
    {},
    [1, [2]],
    {"a": {"b": [None]}},
    "x" * 2_000_000,
    "\x00",
    "\ud800" if False else "\u202e",
    "../../etc/passwd",
    "/etc/passwd",
    "viking://resources/../../..",
    "file:///etc/passwd",
    "viking://~/../../",
    K,
    "viking://resources/" + K,
    {"op": "must", "field": K, "conds": [K]},
]
tools = {
    "find": [
        "query",
        "target_uri",
        "limit",
        "since",
        "until",
        "text_chars",
        "filter",
        "tags",
        "tags_all",
        "context_type",
    ],
    "search": [
        "query",
        "session_id",
        "target_uri",
        "limit",
        "since",
        "until",
        "text_chars",
        "filter",
        "tags",
        "tags_all",
    ],
    "context": [
        "query",
        "max_tokens",
        "session_id",
        "target_uri",
        "limit",
        "filter",
        "tags",
        "tags_all",
    ],
    "ls": ["uri"],
    "read": ["uri", "max_chars"],
    "tree": ["uri", "depth"],
    "add_memory": ["text", "name", "category", "speaker", "timestamp"],
    "nope": ["x"],
    "": [],
    K: ["query"],
}
base = {
    "find": {"query": "deploy"},
    "search": {"query": "deploy"},
    "context": {"query": "deploy"},
    "ls": {},
    "read": {"uri": "viking://resources/devops"},
    "tree": {},
    "add_memory": {"text": "a fact"},
    "nope": {},
    "": {},
    K: {},
}
n = 0
bad = []


def check(req, raw):
    global bad
    text = raw.decode("utf-8", "replace")
    try:
        out = json.loads(raw)
    except Exception as e:
        bad.append(("notjson", str(req)[:200], text[:300]))
        return None
    probs = []
    if out.get("jsonrpc") != "2.0":
        probs.append("jsonrpc")
    if out.get("id") != req.get("id"):
        probs.append("id")
    if ("result" in out) == ("error" in out):
        probs.append("result/error")
    if "Traceback" in text:
        probs.append("traceback")
    for k in keys:
        if k[:16] in text or k[-16:] in text:
            probs.append("secret " + k[:6])
    if "error" in out and not isinstance(out["error"].get("code"), int):
        probs.append("code")
    if "result" in out and req["method"] == "tools/call":
        r = out["result"]
        if r.get("isError"):
            t = r["content"][0]["text"]
            if len(t) > 5000:
                probs.append(f"long error {len(t)}")
            if "Error executing tool" in t and "TreehopError" not in t and "Error:" in t:
                pass
    if probs:
        bad.append((probs, str(req)[:300], text[:400]))
    return out


extra_requests = [
    {"jsonrpc": "2.0", "id": 1001, "method": "tools/call", "params": {"name": "find"}},
    {
        "jsonrpc": "2.0",
        "id": 1002,
        "method": "tools/call",
        "params": {"name": "find", "arguments": "deploy"},
    },
    {
        "jsonrpc": "2.0",
        "id": 1003,
        "method": "tools/call",
        "params": {"name": "find", "arguments": [1]},
    },
    {"jsonrpc": "2.0", "id": 1004, "method": "tools/call", "params": []},
    {"jsonrpc": "2.0", "id": 1005, "method": "tools/call"},
    {
        "jsonrpc": "2.0",
        "id": 1006,
        "method": "tools/call",
        "params": {"name": None, "arguments": {}},
    },
    {
        "jsonrpc": "2.0",
        "id": 1007,
        "method": "tools/call",
        "params": {"name": ["find"], "arguments": {}},
    },
    {"jsonrpc": "2.0", "id": 1008, "method": K, "params": {}},
    {
        "jsonrpc": "2.0",
        "id": 1009,
        "method": "resources/read",
        "params": {"uri": "file:///etc/passwd"},
    },
    {"jsonrpc": "2.0", "id": 1010, "method": "resources/list", "params": {}},
    {"jsonrpc": "2.0", "id": 1011, "method": "prompts/get", "params": {"name": K}},
    {
        "jsonrpc": "2.0",
        "id": 1012,
        "method": "completion/complete",
        "params": {"ref": {"type": "ref/prompt", "name": K}, "argument": {"name": "a", "value": K}},
    },
    {"jsonrpc": "2.0", "id": 1013, "method": "logging/setLevel", "params": {"level": K}},
    {
        "jsonrpc": "2.0",
        "id": 1014,
        "method": "tools/call",
        "params": {"name": "find", "arguments": {"query": "deploy"}, "_meta": {"progressToken": K}},
    },
    {"jsonrpc": "2.0", "id": 1015, "method": "tools/list", "params": {"cursor": K}},
    {
        "jsonrpc": "2.0",
        "id": 1016,
        "method": "tools/call",
        "params": {"name": "find", "arguments": {"query": "deploy", K: 1}},
    },
    {
        "jsonrpc": "2.0",
        "id": 1017,
        "method": "tools/call",
        "params": {"name": "find", "arguments": {"query": "deploy", "x" * 100000: 1}},
    },
    {
        "jsonrpc": "2.0",
        "id": 1018,
        "method": "tools/call",
        "params": {
            "name": "read",
            "arguments": {"uri": "viking://resources/devops", "max_chars": 10**30},
        },
    },
    {
        "jsonrpc": "2.0",
        "id": 1019,
        "method": "tools/call",
        "params": {"name": "tree", "arguments": {"depth": 10**30}},
    },
    {
        "jsonrpc": "2.0",
        "id": 1020,
        "method": "tools/call",
        "params": {"name": "context", "arguments": {"query": "deploy", "max_tokens": 10**30}},
    },
    {
        "jsonrpc": "2.0",
        "id": 1021,
        "method": "tools/call",
        "params": {
            "name": "find",
            "arguments": {
                "query": "deploy",
                "filter": {"op": "and", "conds": [{"op": "and", "conds": []}]},
            },
        },
    },
]
# deep nested filter
deep = (
    '{"op": "and", "conds": [' * 5000
    + '{"op": "must", "field": "team", "conds": ["infra"]}'
    + "]}" * 5000
)
deepline = (
    '{"jsonrpc": "2.0", "id": 1022, "method": "tools/call", "params": {"name": "find", "arguments": {"query": "deploy", "filter": '
    + deep
    + "}}}"
).encode()
deepl = "deploy"
for _ in range(100000):
    deepl = [deepl]
rid = 0
for tool, params in ({} if os.environ.get("EXTRAS_ONLY") else tools).items():
    for p in params:
        for v in hostile_vals:
            rid += 1
            if tool == "add_memory" and (v == K or isinstance(v, str) and K in v):
                continue
            args = dict(base[tool])
            args[p] = v
            req = {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": tool, "arguments": args},
            }
            send(req)
            check(req, answer())
for b in bad:
    print("LOOP", b)
bad.clear()
for req in extra_requests:
    send(req)
    a = answer()
    print("EXTRA", req["id"], a[:300])
    check(req, a)
send(deepline)
print("deep filter:", answer()[:400])
# deeply nested json line
try:
    send(
        b'{"jsonrpc":"2.0","id":2000,"method":"tools/call","params":{"name":"find","arguments":{"query":'
        + b"[" * 100000
        + b"]" * 100000
        + b"}}}"
    )
    print("deep list:", answer()[:300])
except Exception as e:
    print("deep list failed", e)
send({"jsonrpc": "2.0", "id": 9999, "method": "ping"})
print("alive:", answer()[:100], rid)
proc.stdin.close()
print("rc", proc.wait(60))
for b in bad:
    print(b)
err = open(str(idx) + ".stderr.txt", "rb").read().decode("utf-8", "replace")
print("stderr chars", len(err), "traceback", "Traceback" in err, any(k[:16] in err for k in keys))
print(err[-3000:])
