"""The texts of issue 24 that spoke past the 30 s limit (each a 500 then, and minutes of Kokoro): every script
and notation a caller can pick, 400 characters each (the request cap)."""

from __future__ import annotations

from audionet.lib.core.protocol import MAX_TEXT_CHARS


def fill(unit: str) -> str:
    return (unit * (MAX_TEXT_CHARS // len(unit) + 1))[:MAX_TEXT_CHARS].strip()


OVERLONG_TEXTS = {
    "CJK": fill("这是一个测试句子"),
    "symbols": fill("a §¶©®™ "),
    "e-mails": fill("john.doe@example.com "),
    "URLs": fill("https://www.example.com/a/b?q=1 "),
    "Roman numerals": fill("MMMDCCCLXXXVIII "),
    "maths": fill("x ∑∫∂√∞≈≠≤≥ "),
    "phoneme escapes": ("[[h@l'oU]] " * 36).strip(),
}

# Issue 37: text that passes "something to speak" (its characters are digits) but that espeak-ng says nothing
# for: a 500 ("espeak-ng produced no audio") until it was the caller's 400.
SILENT_UNITS = {
    "fullwidth digits": "１２３４５６７８９０",
    "circled numbers": "①②③④⑤⑥⑦⑧⑨⑩",
    "Arabic-Indic digits": "٠١٢٣٤٥٦٧٨٩",
}
