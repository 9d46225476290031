package io.sibyl.ycsb;

import site.ycsb.DB;
import site.ycsb.Status;
import site.ycsb.WorkloadException;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

import java.util.Properties;

/**
 * YCSB's {@link CoreWorkload} with each run-phase operation in one Sibyl transaction, so that a read-modify-write
 * reads and writes in the same snapshot-isolation transaction (plain CoreWorkload makes it two). The outcome of
 * each transaction is reported as {@code [TRANSACTION], Return=OK} or the {@link Outcomes} status of its rollback;
 * the per-call lines ({@code [READ]}, {@code [UPDATE]}, ...) only say that the call itself worked.
 */
public class TransactionalCoreWorkload extends CoreWorkload {
    /** The YCSB measurement name of whole transactions. */
    public static final String TRANSACTION = "TRANSACTION";

    @Override
    public void init(Properties p) throws WorkloadException {
        super.init(p); // first: CoreWorkload sizes its key space by the operation count as given
        TimedRun.apply(p);
    }

    @Override
    public boolean doTransaction(DB db, Object threadState) {
        long t0 = System.nanoTime();
        boolean done;
        Status outcome;
        try (TransactionScope scope = TransactionScope.open()) {
            done = super.doTransaction(db, threadState);
            scope.requireJoined();
            outcome = scope.commit();
        }
        Measurements m = Measurements.getMeasurements();
        m.measure(TRANSACTION, (int) ((System.nanoTime() - t0) / 1000));
        m.reportStatus(TRANSACTION, outcome);
        return done;
    }
}
