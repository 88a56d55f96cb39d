#!/usr/bin/env python3
# Lines of runtime code as issue 47 counts them: every .rs file under the folder given
# (shape-runtime/src), without `tests.rs` / `*_tests.rs` files, `#[cfg(test)]` items, comment
# lines (`//`, `///`, `//!`) and blank lines. Usage: docs/tools/count_runtime_lines.py shape-runtime/src
import os,re,sys
root=sys.argv[1]
total=0
per={}
for d,_,fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs') or f=='tests.rs' or f.endswith('_tests.rs'): continue
        p=os.path.join(d,f); s=open(p).read()
        # drop #[cfg(test)] items (mod blocks) by brace matching
        out=[];i=0
        while True:
            j=s.find('#[cfg(test)]',i)
            if j<0: out.append(s[i:]);break
            out.append(s[i:j])
            k=s.find('{',j); semi=s.find(';',j)
            if semi!=-1 and (k<0 or semi<k): i=semi+1; continue
            depth=0;m=k
            while m<len(s):
                if s[m]=='{':depth+=1
                elif s[m]=='}':
                    depth-=1
                    if depth==0: break
                m+=1
            i=m+1
        s=''.join(out)
        n=0
        for line in s.split('\n'):
            t=line.strip()
            if not t or t.startswith('//'): continue
            n+=1
        per[p]=n; total+=n
print(total)
