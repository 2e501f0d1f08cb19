#!/bin/bash
# Alternating runs: issue #35's main (af2d4c7, /work/wt/old) and today's main (/work/main), same scenarios.
S=get_organization,trpc_get_organization,list_first_page,list_page1_limit100,list_deep_page,list_domains_filter,list_domains_shared,list_group_memberships,jwks,validate_agent_token,widgets_members_list,widgets_organizations,graphql_organization,create_organization,create_domain
run() { # which round
  if [ "$1" = old ]; then cd /work/wt/old && npm run bench -- --sizes 1000 --duration 6 --warmup 2 --scenarios $S --port 18880 --out s15-old-$2;
  else cd /work/main && npm run bench -- --sizes 1000 --duration 6 --warmup 2 --scenarios $S --port 18680 --out s15-new-$2; fi
}
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
for pair in "old new 1" "new old 2" "old new 3"; do
  set -- $pair
  echo "== $1 round $3 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; run $1 $3
  echo "== $2 round $3 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; run $2 $3
done
echo "end $(date -u +%T)"
