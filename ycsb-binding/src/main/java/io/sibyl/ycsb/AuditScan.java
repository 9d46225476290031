package io.sibyl.ycsb;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;

import java.util.HashMap;
import java.util.Set;
import java.util.Vector;

/**
 * Reads every account of the closed economy in one transaction (one scan inside a {@link TransactionScope}) and
 * says whether the snapshot holds exactly the expected accounts and total.
 */
public final class AuditScan {
    private static final Set<String> BALANCE_ONLY = Set.of(Accounts.BALANCE);

    private AuditScan() {
    }

    /** What one audit saw. {@code status} is not OK if the audit could not read a snapshot at all. */
    public record Result(Status status, long accounts, long total, String firstProblem) {
        /** True if the audit read a snapshot and found it different from the expected economy. */
        public boolean violates(Accounts expected) {
            return status.isOk() && (accounts != expected.count() || total != expected.total()
                    || firstProblem != null);
        }

        /** The finding in words, for reports. */
        public String describe(Accounts expected) {
            return "total " + total + " over " + accounts + " accounts, expected " + expected.total() + " over "
                    + expected.count() + (firstProblem == null ? "" : "; " + firstProblem);
        }
    }

    /** Scans the accounts of {@code table} through {@code db} in one transaction. */
    public static Result run(DB db, String table, Accounts accounts) {
        Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
        Status status;
        try (TransactionScope scope = TransactionScope.open()) {
            // One row more than the economy holds, so that a stray row is seen rather than cut off.
            status = db.scan(table, accounts.firstKey(), (int) Math.min(Integer.MAX_VALUE, accounts.count() + 1),
                    BALANCE_ONLY, rows);
            Status committed = scope.commit();
            if (status.isOk()) {
                scope.requireJoined();
            }
            if (status.isOk()) {
                status = committed;
            }
        }
        if (!status.isOk()) {
            return new Result(status, 0, 0, null);
        }
        long total = 0;
        String problem = null;
        for (HashMap<String, ByteIterator> row : rows) {
            ByteIterator balance = row.get(Accounts.BALANCE);
            if (balance == null) {
                problem = problem == null ? "a row without a balance" : problem;
                continue;
            }
            String text = balance.toString();
            try {
                total += Long.parseLong(text);
            } catch (NumberFormatException e) {
                problem = problem == null ? "a balance that is not a number: '" + text + "'" : problem;
            }
        }
        return new Result(Status.OK, rows.size(), total, problem);
    }
}
