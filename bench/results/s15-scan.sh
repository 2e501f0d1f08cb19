#!/bin/bash
# Coarse scan: each commit's own npm run bench on the regressing scenarios, with main and af2d4c7 as references in the same sequence.
S=get_organization,trpc_get_organization,list_domains_filter,graphql_organization,jwks
one() { # name dir
  cd $2 && echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" && npm run bench -- --sizes 1000 --duration 5 --warmup 2 --scenarios $S --port 18880 --skip-baseline --out s15-scan-$1 2>&1 | grep -E "req/s|error|Error" ; 
}
for c in "$@"; do one $c /work/wt/scan-$c; done
echo "end $(date -u +%T)"
