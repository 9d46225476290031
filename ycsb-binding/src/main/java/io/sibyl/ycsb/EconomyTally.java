package io.sibyl.ycsb;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** What the closed-economy workload counted, across its YCSB client threads, for its final report. */
public final class EconomyTally {
    final LongAdder accountsLoaded = new LongAdder();
    final LongAdder transfersCommitted = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder transfersGivenUp = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder audits = new LongAdder();
    final AtomicLong violations = new AtomicLong();

    /** Violations seen by audits so far. */
    public long violations() {
        return violations.get();
    }

    /** Operations that failed for another reason than a conflict (errors, unexpected rollbacks). */
    public long errors() {
        return errors.sum();
    }

    /** One line with every count, for the run phase. */
    public String runReport() {
        return "transfers committed " + transfersCommitted.sum() + ", conflicts " + conflicts.sum()
                + " (retried), transfers given up after retries " + transfersGivenUp.sum() + ", errors "
                + errors.sum() + ", audits " + audits.sum() + ", violations " + violations.get();
    }

    /** One line with the counts of the load phase. */
    public String loadReport() {
        return "accounts loaded " + accountsLoaded.sum() + ", errors " + errors.sum();
    }
}
