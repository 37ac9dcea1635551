"""Vendor API keys of the shapes their vendors issue, made from a seed: the redaction tests' inputs.

One table for every redaction test (leftovers74's ``sk-`` slugs, attacks88's keys split by a
break), so a new vendor shape or a corrected length reaches every test that masks keys.
"""

from __future__ import annotations

import random
import string

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def vendor_key(kind: str, seed: int) -> str:
    """A key of ``kind`` (a name in :data:`VENDOR_KINDS`), the same one for the same ``seed``."""
    r = random.Random(seed)

    def pick(alphabet: str, n: int) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    return {
        "openai-legacy": lambda: "sk-" + pick(ALNUM, 48),  # (also Moonshot's)
        "openai-proj": lambda: "sk-proj-" + pick(URLSAFE, 156),
        "openai-svcacct": lambda: "sk-svcacct-" + pick(URLSAFE, 120),
        "openai-admin": lambda: "sk-admin-" + pick(URLSAFE, 100),
        "anthropic": lambda: "sk-ant-api03-" + pick(URLSAFE, 93) + "AA",
        "deepseek": lambda: "sk-" + pick(HEX, 32),  # (also DashScope's)
        "openrouter": lambda: "sk-or-v1-" + pick(HEX, 64),
        "github": lambda: "ghp_" + pick(ALNUM, 36),
        "huggingface": lambda: "hf_" + pick(ALNUM, 34),
        "aws": lambda: "AKIA" + pick(string.ascii_uppercase + string.digits, 16),
        "google": lambda: "AIza" + pick(URLSAFE, 35),
    }[kind]()


VENDOR_KINDS = (
    "openai-legacy",
    "openai-proj",
    "openai-svcacct",
    "openai-admin",
    "anthropic",
    "deepseek",
    "openrouter",
    "github",
    "huggingface",
    "aws",
    "google",
)
