package io.sibyl.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the clients were told committed: per account, the sum of the transfers whose commit returned normally. The
 * final check holds when every balance read back equals its opening value plus that sum, so no acknowledged commit
 * was lost and nothing reported as rolled back took effect (a constant total alone would miss both, as long as
 * each transfer is all-or-nothing).
 */
public final class Ledger {
    private final long opening;
    private final AtomicLongArray delta;
    /** Commits whose outcome the client could not learn: the exact check cannot be made while any exist. */
    private final AtomicLong unknown = new AtomicLong();

    /** A ledger of {@code accounts} accounts that each opened with {@code opening}. */
    public Ledger(int accounts, long opening) {
        this.opening = opening;
        this.delta = new AtomicLongArray(accounts);
    }

    /** Records a transfer whose commit was acknowledged. */
    public void committed(int from, int to, long amount) {
        delta.addAndGet(from, -amount);
        delta.addAndGet(to, amount);
    }

    /** Records a commit that may or may not have taken effect ({@code CommitOutcomeUnknownException}). */
    public void outcomeUnknown() {
        unknown.incrementAndGet();
    }

    /** The balance account {@code i} must have. */
    public long expected(int i) {
        return opening + delta.get(i);
    }

    /** Number of accounts. */
    public int accounts() {
        return delta.length();
    }

    /** The sum every consistent snapshot must show. */
    public long expectedTotal() {
        return opening * delta.length();
    }

    /** The result of comparing balances read back with the ledger. */
    public record Check(boolean pass, long total, long expectedTotal, int mismatched, int missing, long unknown,
                        List<String> examples) {
        /** One line for the report. */
        public String describe() {
            if (pass) {
                return "PASS: every balance equals its opening value plus its committed transfers; total " + total
                        + " = " + expectedTotal;
            }
            StringBuilder sb = new StringBuilder("FAIL: ");
            if (unknown > 0) {
                sb.append(unknown).append(" commits of unknown outcome (no exact check possible); ");
            }
            sb.append(mismatched).append(" balances differ from the ledger, ").append(missing)
                    .append(" accounts missing; total ").append(total).append(" (expected ").append(expectedTotal)
                    .append(')');
            if (!examples.isEmpty()) {
                sb.append("; e.g. ").append(String.join(", ", examples));
            }
            return sb.toString();
        }
    }

    /**
     * Compares {@code balances} (indexed by account; {@code null} for an account that was not found) with the
     * ledger.
     */
    public Check check(Long[] balances) {
        if (balances.length != delta.length()) {
            throw new IllegalArgumentException(balances.length + " balances for " + delta.length() + " accounts");
        }
        long total = 0;
        int mismatched = 0;
        int missing = 0;
        List<String> examples = new ArrayList<>();
        for (int i = 0; i < balances.length; i++) {
            if (balances[i] == null) {
                missing++;
                if (examples.size() < 5) {
                    examples.add(DemoWorkload.accountName(i) + " missing");
                }
                continue;
            }
            total += balances[i];
            if (balances[i] != expected(i)) {
                mismatched++;
                if (examples.size() < 5) {
                    examples.add(DemoWorkload.accountName(i) + " is " + balances[i] + ", ledger says " + expected(i));
                }
            }
        }
        long u = unknown.get();
        boolean pass = mismatched == 0 && missing == 0 && u == 0 && total == expectedTotal();
        return new Check(pass, total, expectedTotal(), mismatched, missing, u, List.copyOf(examples));
    }
}
