package io.sibyl.ycsb;

import site.ycsb.DB;

import java.util.concurrent.ThreadLocalRandom;

/**
 * A closed economy whose audits, for YcsbClosedEconomyTest, see their snapshot expire (as across an oracle failover)
 * on every first attempt, and on a later one now and then: the workload must try them again, not count errors.
 */
public class ExpiringAuditWorkload extends ClosedEconomyWorkload {
    private final ThreadLocal<Boolean> retrying = ThreadLocal.withInitial(() -> false);

    @Override
    protected AuditScan.Result auditOnce(DB db, String table, Accounts accounts) {
        if (!retrying.get() || ThreadLocalRandom.current().nextInt(4) == 0) {
            retrying.set(true);
            return new AuditScan.Result(Outcomes.SNAPSHOT_EXPIRED, 0, 0, "the test expired this snapshot");
        }
        retrying.set(false);
        return super.auditOnce(db, table, accounts);
    }
}
