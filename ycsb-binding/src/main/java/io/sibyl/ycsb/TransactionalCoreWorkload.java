package io.sibyl.ycsb;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;
import site.ycsb.WorkloadException;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

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
            outcome = scope.committed() != null ? scope.committed() : scope.commit();
        }
        Measurements m = Measurements.getMeasurements();
        m.measure(TRANSACTION, (int) ((System.nanoTime() - t0) / 1000));
        m.reportStatus(TRANSACTION, outcome);
        return done;
    }

    /**
     * CoreWorkload acknowledges an inserted key, making it one that reads may ask for, as soon as the insert call
     * returns; inside a scope the insert is then only buffered, and reads of the newest keys ({@code latest}) would
     * find nothing. So the scope commits right after the insert call, before the acknowledgement.
     */
    @Override
    public void doTransactionInsert(DB db) {
        TransactionScope scope = TransactionScope.current();
        super.doTransactionInsert(scope == null ? db : new CommitAfterInsert(db, scope));
    }

    /** Passes every call to {@code db}; an insert that worked commits the scope at once. */
    private static final class CommitAfterInsert extends DB {
        private final DB db;
        private final TransactionScope scope;

        CommitAfterInsert(DB db, TransactionScope scope) {
            this.db = db;
            this.scope = scope;
        }

        @Override
        public Status insert(String table, String key, Map<String, ByteIterator> values) {
            Status s = db.insert(table, key, values);
            return s.isOk() ? scope.commit() : s;
        }

        @Override
        public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
            return db.read(table, key, fields, result);
        }

        @Override
        public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                           Vector<HashMap<String, ByteIterator>> result) {
            return db.scan(table, startkey, recordcount, fields, result);
        }

        @Override
        public Status update(String table, String key, Map<String, ByteIterator> values) {
            return db.update(table, key, values);
        }

        @Override
        public Status delete(String table, String key) {
            return db.delete(table, key);
        }
    }
}
