# The alternating npm run bench runs of af2d4c7 (old) and main (new), per round: python3 bench/results/s15-compare.py
import json,glob,statistics as st,os
def load(p):
    d=json.load(open(p)); return d
rows={}
order=[]
for r in (1,2,3):
    for side in ('old','new'):
        p=os.path.join(os.path.dirname(os.path.abspath(__file__)), f's15-{side}-{r}.json')
        if not os.path.exists(p): continue
        d=load(p)
        for run in d['runs']:
            s=run['scenario']
            if s not in order: order.append(s)
            rows.setdefault(s,{}).setdefault(side,{})[r]=(run['rps'],run['cpuUsPerRequest'])
        rows.setdefault('_baseline',{}).setdefault(side,{})[r]=(d['baseline']['rps'],{})
print(f"{'scenario':34} {'old r1/r2/r3':>24} {'new r1/r2/r3':>24} {'new/old per round':>22} median  cpu old->new (server)")
for s in ['_baseline']+order:
    o=rows[s].get('old',{}); n=rows[s].get('new',{})
    rs=[r for r in (1,2,3) if r in o and r in n]
    ratios=[n[r][0]/o[r][0] for r in rs if o[r][0]]
    fmt=lambda m:'/'.join(str(m[r][0]) if r in m else '-' for r in (1,2,3))
    cpu=lambda m:'/'.join(str(m[r][1].get('server','-')) if r in m else '-' for r in (1,2,3))
    med=st.median(ratios) if ratios else float('nan')
    print(f"{s:34} {fmt(o):>24} {fmt(n):>24} {'/'.join(f'{x:.2f}' for x in ratios):>22} {med:5.2f}  {cpu(o)} -> {cpu(n)}")
