#!/usr/bin/env python3
"""Regenerates REQUIREMENTS.md from the product spec (../shared/SPEC.md beside the repository):
each requirement id with the first sentence of its text. Run from the repository root:
    python3 scripts/gen-requirements.py
tests/it/glossary.rs checks every id cited in code and docs is listed."""
import re
import os, sys
spec_path=sys.argv[1] if len(sys.argv) > 1 else os.path.join('..', 'shared', 'SPEC.md')
spec=open(spec_path).read()
lines=spec.split('\n')
entries=[];cur=None
i=0
while i<len(lines):
    l=lines[i]
    m=re.match(r'^## (\S+) — (.*)',l)
    if m: cur=(m.group(1),m.group(2))
    elif re.match(r'^## ',l): cur=(l[3:].strip(),'')
    m=re.match(r'^- (?:\*\*)?((?:CORE|LLM|CMP|MEM|SUB|ISO|FFI|NAPI|STORE|OHOS|PERF|REL|DX|PAR|ARCH|COST|WIRE|IMG)-\d+) (.*)',l)
    if m:
        text=m.group(2); j=i+1
        while j<len(lines) and lines[j].startswith('  '):
            text+=' '+lines[j].strip(); j+=1
        text=text.replace('**','')
        parts=re.split(r'(?<=[.;])\s',text)
        first=parts[0] if len(parts[0])>=40 or len(parts)==1 else parts[0]+' '+parts[1]
        if len(first)>160: first=first[:157].rstrip()+'…'
        entries.append((cur,m.group(1),first))
    i+=1
ids=[e[1] for e in entries]
print(f'REQUIREMENTS.md: {len(entries)} ids from {spec_path}')
out=['# Requirement ids','','The ids that test names, comments and commit messages cite (CORE-4, CMP-6, STORE-2 …),',
'each with the first sentence of its requirement in the product spec (`SPEC.md`, kept beside',
'the repository, not in it). `tests/it/glossary.rs` fails when code or docs cite an id that is',
'not listed here.']
last=None
bar='\\|'
for (sec,id_,first) in entries:
    if sec!=last:
        out.append(''); out.append('## '+sec[0]+(' — '+sec[1] if sec[1] else '')); out.append(''); out.append('| id | requirement |'); out.append('|---|---|')
        last=sec
    out.append('| '+id_+' | '+first.replace('|',bar)+' |')
open('REQUIREMENTS.md','w').write('\n'.join(out)+'\n')
