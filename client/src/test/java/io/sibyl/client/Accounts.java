package io.sibyl.client;

import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bank of the transfer workloads: {@code count} account rows {@code acct000...} (balance in cf:v) in a table
 * that may hold other rows after them, opened, moved between and summed inside transactions.
 */
final class Accounts {
    private static final byte[] FIRST = b("acct");
    private static final byte[] AFTER_LAST = b("acct~"); // '~' sorts after every digit

    final TTable table;
    final int count;

    Accounts(TTable table, int count) {
        this.table = table;
        this.count = count;
    }

    static String account(int i) {
        return String.format("acct%03d", i);
    }

    /** Writes every account with the same opening balance. */
    void open(Transaction tx, long opening) throws IOException {
        for (int i = 0; i < count; i++) {
            TestSupport.putInt(table, tx, account(i), opening);
        }
    }

    /** Reads both balances in one multi-get and writes them back moved by {@code amount}. */
    void transfer(Transaction tx, int from, int to, long amount) throws IOException {
        Result[] r = table.get(tx, List.of(new Get(b(account(from))), new Get(b(account(to)))));
        long a = Bytes.toLong(r[0].getValue(CF, V));
        long bal = Bytes.toLong(r[1].getValue(CF, V));
        table.put(tx, List.of(new Put(b(account(from))).addColumn(CF, V, Bytes.toBytes(a - amount)),
                new Put(b(account(to))).addColumn(CF, V, Bytes.toBytes(bal + amount))));
    }

    /** A transfer of a workload that also writes its own record row, in the same transaction. */
    interface RecordedTransfer {
        int from();

        int to();

        long amount();

        String record();
    }

    /**
     * Checks the final state in {@code check}'s snapshot against the transfers' outcomes: the total is unchanged,
     * every committed transfer took effect, no failed one did, and one whose outcome is unknown is settled by its
     * record row (the record and both balance changes are in a snapshot together or not at all).
     */
    void assertSettled(Transaction check, long opening, Collection<? extends RecordedTransfer> committed,
                       Collection<? extends RecordedTransfer> failed, Collection<? extends RecordedTransfer> unknown)
            throws IOException {
        assertEquals(count * opening, total(check), "final total");
        List<RecordedTransfer> all = new ArrayList<>(committed);
        all.addAll(failed);
        all.addAll(unknown);
        Result[] records = table.get(check, all.stream().map(t -> new Get(b(t.record())).addColumn(CF, V)).toList());
        Set<String> recorded = new HashSet<>();
        for (int i = 0; i < records.length; i++) {
            if (!records[i].isEmpty()) {
                recorded.add(all.get(i).record());
            }
        }
        long[] expected = new long[count];
        Arrays.fill(expected, opening);
        for (RecordedTransfer t : committed) {
            assertTrue(recorded.contains(t.record()), "acknowledged commit lost: " + t);
            expected[t.from()] -= t.amount();
            expected[t.to()] += t.amount();
        }
        for (RecordedTransfer t : failed) {
            assertTrue(!recorded.contains(t.record()), "a transfer reported failed took effect: " + t);
        }
        for (RecordedTransfer t : unknown) {
            if (recorded.contains(t.record())) {
                expected[t.from()] -= t.amount();
                expected[t.to()] += t.amount();
            }
        }
        for (int i = 0; i < count; i++) {
            assertEquals(expected[i], balance(check, i), "balance of " + account(i) + " (a lost or phantom update)");
        }
    }

    long balance(Transaction tx, int i) throws IOException {
        return TestSupport.getInt(table, tx, account(i));
    }

    /** The sum of all balances in the transaction's snapshot (one scan); fails if an account is missing. */
    long total(Transaction tx) throws IOException {
        return total(tx, count, false, () -> { });
    }

    /**
     * Like {@link #total(Transaction)}, with {@code caching} rows per HBase RPC, forwards or backwards, running
     * {@code afterRow} after each row (e.g. a pause, so that the scan is still open while regions change); also
     * fails if the rows come out of order.
     */
    long total(Transaction tx, int caching, boolean reversed, Runnable afterRow) throws IOException {
        return total(tx, caching, reversed, afterRow, null);
    }

    /** Like {@link #total(Transaction, int, boolean, Runnable)}, adding each row the scan returns to {@code seen}. */
    long total(Transaction tx, int caching, boolean reversed, Runnable afterRow, List<Result> seen)
            throws IOException {
        Scan scan = reversed ? new Scan().withStartRow(AFTER_LAST).withStopRow(FIRST).setReversed(true)
                : new Scan().withStartRow(FIRST).withStopRow(AFTER_LAST);
        long sum = 0;
        int n = 0;
        byte[] last = null;
        try (ResultScanner s = table.getScanner(tx, scan.setCaching(caching))) {
            for (Result r : s) {
                if (last != null && Bytes.compareTo(last, r.getRow()) * (reversed ? -1 : 1) >= 0) {
                    throw new AssertionError("the scan of " + tx + " returned " + Bytes.toString(r.getRow())
                            + " after " + Bytes.toString(last) + (reversed ? " (reversed)" : ""));
                }
                last = r.getRow();
                if (seen != null) {
                    seen.add(r);
                }
                sum += Bytes.toLong(r.getValue(CF, V));
                n++;
                afterRow.run();
            }
        }
        assertEquals(count, n, "accounts in the snapshot of " + tx);
        return sum;
    }

    /** The sum of all balances read in one multi-get (which HBase splits by region); fails if one is missing. */
    long totalByGets(Transaction tx) throws IOException {
        List<Get> gets = new java.util.ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            gets.add(new Get(b(account(i))).addColumn(CF, V));
        }
        long sum = 0;
        Result[] rs = table.get(tx, gets);
        for (int i = 0; i < count; i++) {
            byte[] v = rs[i].getValue(CF, V);
            if (v == null) {
                throw new AssertionError(account(i) + " is missing in the snapshot of " + tx);
            }
            sum += Bytes.toLong(v);
        }
        return sum;
    }
}
