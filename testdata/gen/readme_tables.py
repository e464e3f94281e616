"""Rewrite the README's score tables from what this build prints.

Usage (from the repository root, ../shared beside it):

    /usr/bin/python3 testdata/gen/calibrate.py ./graphdiff testdata --lofo > /tmp/lofo.txt
    /usr/bin/python3 testdata/gen/calibrate.py ./graphdiff testdata --lofo --by harness > /tmp/loho.txt
    python3 testdata/gen/readme_tables.py ./graphdiff /tmp/lofo.txt /tmp/loho.txt

The fenced `family`/`harness` blocks are replaced, in order, by
score.py's output for testdata, testdata --by harness and
testdata/userloops (TestREADMEScores checks them); the leave-one-family-out
and leave-one-harness-out tables by the rows calibrate.py printed.
"""
import re, subprocess, sys
BINARY, LOFO, LOHO = sys.argv[1:4]
readme = open('README.md').read()
def score(*args):
    return subprocess.run(['python3', '../shared/score/score.py', BINARY, *args], capture_output=True, text=True).stdout.strip()
blocks = {'family': [score('testdata'), score('testdata/userloops')], 'harness': [score('testdata', '--by', 'harness')]}
def repl_blocks(text):
    out = []; used = {'family': 0, 'harness': 0}
    parts = re.split(r'(```\n(?:family|harness) [^`]*?```)', text)
    for p in parts:
        m = re.match(r'```\n(family|harness) ', p)
        if m:
            k = m.group(1); new = blocks[k][used[k]]; used[k] += 1
            p = '```\n' + new + '\n```'
        out.append(p)
    print('blocks', used, file=sys.stderr)
    return ''.join(out)
readme = repl_blocks(readme)
def rules_cell(r, allr):
    if r == allr: return '(as all families)'
    return ', '.join(f"{k} {('%g' % v)}" for k, v in r.items())
import json
def parse(path):
    txt = open(path).read(); rows = {}
    for m in re.finditer(r'== (\S+), scored with the rules derived without it: (\{.*?\})\n(.*?)(?=\n==|\Z)', txt, re.S):
        name, rules = m.group(1), json.loads(m.group(2))
        line = [l for l in m.group(3).splitlines() if l.startswith(name + ' ')][0].split()[1:]
        rows[name] = (rules, line)
    allr = json.loads(re.search(r'rules from all families \(MARGIN 2\): (\{.*\})', txt).group(1))
    return rows, allr
def table(rows, allr, head, same='(as all families)'):
    lines = [head, '|---|---|---|---|---|---|---|---|']
    tot = None
    for name, (r, cells) in sorted(rows.items()):
        rc = same if r == allr else ', '.join(f"{k} {('%g' % v)}" for k, v in r.items())
        lines.append(f"| {name} | {rc} | " + ' | '.join(cells) + ' |')
        nums = [tuple(map(int, c.split('/'))) if '/' in c else None for c in cells]
        tot = nums if tot is None else [None if a is None or b is None else (a[0]+b[0], a[1]+b[1]) for a, b in zip(tot, nums)]
    return lines, tot
fam, allf = parse(LOFO)
lines, tot = table(fam, allf, '| family | rules derived without it | verdict | specificity | sensitivity | step | cause | wrong_sure |')
lines.append('| ALL |  | ' + ' | '.join(f'{a}/{b}' if t else '-' for t in tot for a, b in [t or (0, 0)]) + ' |')
readme = re.sub(r'\| family \| rules derived without it \|.*?\n\| ALL \|[^\n]*\|', '\n'.join(lines), readme, flags=re.S)
har, allh = parse(LOHO)
lines, _ = table(har, allh, '| harness held out | rules derived without it | verdict | specificity | sensitivity | step | cause | wrong_sure |', same=None)
lines = [l if '| None |' not in l else l.replace('| None |', '| ' + ', '.join(f"{k} {('%g' % v)}" for k, v in allh.items()) + ' |') for l in lines]
readme = re.sub(r'\| harness held out \|.*?(?=\n\n)', '\n'.join(lines), readme, flags=re.S)
open('README.md', 'w').write(readme)
print('\n'.join(lines))
