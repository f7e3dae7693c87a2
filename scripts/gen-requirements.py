#!/usr/bin/env python3
"""Regenerates REQUIREMENTS.md: each requirement id of the product spec with the first
sentence of its text, and, for each id, the tests named after it (ARCH-1, issue 28 item 13).
Run from the repository root:

    python3 scripts/gen-requirements.py            # write REQUIREMENTS.md
    python3 scripts/gen-requirements.py --check    # exit 1 when REQUIREMENTS.md is stale
    python3 scripts/gen-requirements.py [--check] path/to/SPEC.md

The spec is ../shared/SPEC.md beside the repository; without it the ids and their text are
read back from REQUIREMENTS.md itself (so --check works on a clean clone: only the test
listing is recomputed). A test carries an id when

- a Rust test (`#[test]` / `#[tokio::test]` fn, proptest ones included) is named
  `prefix_n_…`, ids repeated (`store_1_store_4_…`), in src/, bindings/, tests/ or examples/;
- a JS test's title (`test('…')` / `it('…')` in a `.js` file under tests/ (tests/js,
  tests/arkts), bindings/ or examples/, or in an ohosTest case `*.test.ets` under ohos/,
  which scripts/run-ohostest.js runs under Node) starts with that spelling (`cmp_12 …`,
  `img_1_img_2_…`) or names `PREFIX-N` anywhere (`COST-1 COST-2 …`).

tests/it/glossary.rs recomputes the listing the same way and fails when this file is stale
or an id has no test; keep the two in step (the rules above are the whole of it)."""
import os
import re
import sys

PREFIXES = ['CORE', 'LLM', 'CMP', 'MEM', 'SUB', 'ISO', 'FFI', 'NAPI', 'STORE', 'OHOS', 'PERF', 'REL', 'DX', 'PAR', 'ARCH', 'COST', 'WIRE', 'IMG', 'THINK', 'BND', 'TOOL', 'CHAT', 'MCP']
# Ids of the spec whose issue is still open: named in one line, not in the tables, until
# their work lands (then remove them here and regenerate).
# (prefix, number): issue. Not spelled as ids here, so that citing them is not a use.
PENDING = {'-'.join((p, str(n))): issue for (p, n), issue in {}.items()}
ID = re.compile(r'^- (?:\*\*)?((?:' + '|'.join(PREFIXES) + r')-\d+) (.*)')
TESTS_HEADING = '## Tests by requirement'
SCAN_DIRS = ['src', 'bindings', 'tests', 'examples', 'ohos']
SKIP_DIRS = {'target', 'node_modules', 'oh_modules', 'fixtures', '.git'}


def spec_entries(spec):
    """(section, id, first sentence) for every id of the spec, in order."""
    lines = spec.split('\n')
    entries = []
    cur = None
    for i, l in enumerate(lines):
        m = re.match(r'^## (\S+) — (.*)', l)
        if m:
            cur = (m.group(1), m.group(2))
        elif re.match(r'^## ', l):
            cur = (l[3:].strip(), '')
        m = ID.match(l)
        if m:
            text = m.group(2)
            j = i + 1
            while j < len(lines) and lines[j].startswith('  '):
                text += ' ' + lines[j].strip()
                j += 1
            text = text.replace('**', '')
            parts = re.split(r'(?<=[.;])\s', text)
            first = parts[0] if len(parts[0]) >= 40 or len(parts) == 1 else parts[0] + ' ' + parts[1]
            if len(first) > 160:
                first = first[:157].rstrip() + '…'
            entries.append((cur, m.group(1), first.replace('|', '\\|')))
    return entries


def file_entries(text):
    """The same entries, read back from a generated REQUIREMENTS.md."""
    entries = []
    cur = None
    for l in text.split('\n'):
        if l.startswith(TESTS_HEADING):
            break
        if l.startswith('## '):
            head, _, tail = l[3:].partition(' — ')
            cur = (head, tail)
        m = re.match(r'^\| ([A-Z]+-\d+) \| (.*) \| \d+ \|$', l) or re.match(r'^\| ([A-Z]+-\d+) \| (.*) \|$', l)
        if m:
            entries.append((cur, m.group(1), m.group(2)))
    return entries


def lower_ids(name):
    """Ids leading a name: `prefix_n_` repeated."""
    out = []
    parts = name.split('_')
    k = 0
    while k + 1 < len(parts):
        word, n = parts[k].upper(), parts[k + 1]
        if word not in PREFIXES or not (1 <= len(n) <= 2 and n.isdigit()):
            break
        out.append(word + '-' + n)
        k += 2
    return out


UPPER = re.compile(r'(?<![A-Za-z0-9_])(' + '|'.join(PREFIXES) + r')-(\d{1,2})(?![A-Za-z0-9])')


def upper_ids(text):
    return [m.group(1) + '-' + m.group(2) for m in UPPER.finditer(text)]


RUST_FN = re.compile(r'^(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+([A-Za-z0-9_]+)')


def rust_tests(text):
    """(name, ids) of the test fns of a Rust file."""
    out = []
    pending = False
    for line in text.split('\n'):
        s = line.strip()
        if s.startswith('#[test]') or s.startswith('#[tokio::test'):
            pending = True
            continue
        if not pending or s == '' or s.startswith('#[') or s.startswith('//'):
            continue
        pending = False
        m = RUST_FN.match(s)
        if m:
            out.append((m.group(1), lower_ids(m.group(1))))
    return out


def js_title(rest):
    """The string literal `rest` starts with (its quote first), unescaped; None if none."""
    if not rest or rest[0] not in '\'"`':
        return None
    quote, out, k = rest[0], [], 1
    while k < len(rest) and rest[k] != quote:
        if rest[k] == '\\' and k + 1 < len(rest):
            k += 1
        out.append(rest[k])
        k += 1
    return ''.join(out).replace('`', "'")


def js_tests(text):
    """(title, ids) of the test() / it() calls of a JS file."""
    out = []
    for line in text.split('\n'):
        s = line.strip()
        for call in ('test(', 'it('):
            if s.startswith(call):
                title = js_title(s[len(call):].lstrip())
                if title is not None:
                    first = title.split()[0] if title.split() else ''
                    ids = lower_ids(first) + upper_ids(title)
                    out.append((title, ids))
    return out


def tests_by_id(root):
    """id → {file: {test names}} over the repository."""
    found = {}
    for top in SCAN_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, '/')
                ohos = top == 'ohos'
                if name.endswith('.rs') and not ohos:
                    tests = rust_tests(open(path, encoding='utf-8').read())
                elif name.endswith('.test.ets' if ohos else '.js'):
                    tests = js_tests(open(path, encoding='utf-8').read())
                else:
                    continue
                for test, ids in tests:
                    for id_ in ids:
                        found.setdefault(id_, {}).setdefault(rel, set()).add(test)
    return found


def render(entries, found):
    out = ['# Requirement ids', '',
           'The ids that test names, comments and commit messages cite (CORE-4, CMP-6, STORE-2 …),',
           'each with the first sentence of its requirement in the product spec (`SPEC.md`, kept beside',
           'the repository, not in it) and the number of tests named after it; the tests themselves',
           'are listed under "Tests by requirement" below. Generated by `python3',
           'scripts/gen-requirements.py` (from the spec and the test names); `tests/it/glossary.rs`',
           'fails when code or docs cite an id that is not listed here, when an id has no test, and',
           'when the listing is stale (regenerate it with the same command).']
    pending = [f'{id_} (issue {n})' for id_, n in PENDING.items()]
    if pending:
        out += ['', 'Not built yet, so not listed: ' + ', '.join(pending) + '.']
    last = None
    for sec, id_, first in entries:
        if sec != last:
            out += ['', '## ' + sec[0] + (' — ' + sec[1] if sec[1] else ''), '', '| id | requirement | tests |', '|---|---|---|']
            last = sec
        count = sum(len(v) for v in found.get(id_, {}).values())
        out.append('| ' + id_ + ' | ' + first + ' | ' + str(count) + ' |')
    out += ['', TESTS_HEADING, '',
            'For each id, the tests carrying it: Rust tests named `prefix_n_…` (src/, bindings/, tests/,',
            'examples/), JS tests (tests/js, tests/arkts) and ohosTest cases (ohos/, run under Node by',
            'scripts/run-ohostest.js) whose title starts with that spelling or names the id. By file,',
            'then by name.']
    for _, id_, _ in entries:
        out += ['', '### ' + id_, '']
        files = found.get(id_, {})
        if not files:
            out.append('- none')
        for rel in sorted(files):
            out.append('- `' + rel + '`: ' + ', '.join('`' + t + '`' for t in sorted(files[rel])))
    return '\n'.join(out) + '\n'


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    check = '--check' in sys.argv[1:]
    spec_path = args[0] if args else os.path.join('..', 'shared', 'SPEC.md')
    current = open('REQUIREMENTS.md', encoding='utf-8').read() if os.path.exists('REQUIREMENTS.md') else ''
    if os.path.exists(spec_path):
        entries = [e for e in spec_entries(open(spec_path, encoding='utf-8').read()) if e[1] not in PENDING]
        source = spec_path
    else:
        entries = file_entries(current)
        source = 'REQUIREMENTS.md (no spec at ' + spec_path + ')'
    text = render(entries, tests_by_id('.'))
    untested = [id_ for _, id_, _ in entries if '\n### ' + id_ + '\n\n- none\n' in text]
    if check:
        if text != current:
            print('REQUIREMENTS.md is stale: run python3 scripts/gen-requirements.py', file=sys.stderr)
            sys.exit(1)
        print(f'REQUIREMENTS.md: {len(entries)} ids, up to date ({source})')
    else:
        open('REQUIREMENTS.md', 'w', encoding='utf-8').write(text)
        print(f'REQUIREMENTS.md: {len(entries)} ids from {source}')
    if untested:
        print('ids without a test: ' + ', '.join(untested), file=sys.stderr)


if __name__ == '__main__':
    main()
