#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: one run of the tenants benchmark, the four-tenant
# scenarios of the htmm_tenant_test kselftest: four_tenants (budgets of
# 16, 32, 48 and 64 MiB below an enabled cgroup) and
# four_tenants_overcommit (top cgroups whose budgets, 16 and 32 MiB and
# the whole node twice, overcommit node 0).  Their logs give each
# tenant's effective budget, hot data, share of it on node 0, goal and
# seconds to the goal.  Everything goes to the results port (ttyS1); the
# host side is scripts/bench.sh tenants.
exec > /dev/ttyS1 2>&1
cd /htmm || exit 1
for t in four_tenants four_tenants_overcommit; do
	echo "### scenario $t"
	tests/htmm_tenant_test -t "$t" 2>&1
	echo "### exit $t $?"
done
