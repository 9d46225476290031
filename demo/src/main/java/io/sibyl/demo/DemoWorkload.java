package io.sibyl.demo;

import io.sibyl.client.CommitOutcomeUnknownException;
import io.sibyl.client.RollbackException;
import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import org.HdrHistogram.Histogram;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/** The transfer and audit loops of the demo and what they count. */
public final class DemoWorkload {
    static final byte[] CF = Bytes.toBytes("cf");
    static final byte[] BALANCE = Bytes.toBytes("balance");

    private final TransactionManager tm;
    private final TTable accounts;
    private final DemoFlags f;
    private final Ledger ledger;
    private final FailoverClock clock;
    private final long startNanos;
    private final AtomicBoolean stop = new AtomicBoolean();

    final AtomicLongArray commitsPerSecond;
    final AtomicLongArray abortsPerSecond;
    final AtomicLong committed = new AtomicLong();
    /** Attempts that ended without a commit: conflicts and transactions the failover aborted, all retried. */
    final AtomicLong aborted = new AtomicLong();
    /** Transfers that {@code run} gave up on (retries exhausted or not retryable): not committed, not in the ledger. */
    final AtomicLong gaveUp = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong audits = new AtomicLong();
    final AtomicLong auditErrors = new AtomicLong();
    final AtomicLong auditViolations = new AtomicLong();
    final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    final Histogram transferLatencyUs = new Histogram(3);
    final Histogram auditLatencyUs = new Histogram(3);

    DemoWorkload(TransactionManager tm, TTable accounts, DemoFlags f, Ledger ledger, FailoverClock clock,
                 long startNanos) {
        this.tm = tm;
        this.accounts = accounts;
        this.f = f;
        this.ledger = ledger;
        this.clock = clock;
        this.startNanos = startNanos;
        // Slack past the end: the last transfers finish after the stop, and a slow stop must not overflow.
        this.commitsPerSecond = new AtomicLongArray(f.durationSeconds + 120);
        this.abortsPerSecond = new AtomicLongArray(f.durationSeconds + 120);
    }

    /** Row key of account {@code i}; zero-padded so a scan returns accounts in order. */
    public static String accountName(int i) {
        return String.format(Locale.ROOT, "acct-%07d", i);
    }

    static byte[] key(int i) {
        return Bytes.toBytes(accountName(i));
    }

    void stop() {
        stop.set(true);
    }

    private int second(long nanos) {
        int s = (int) ((nanos - startNanos) / 1_000_000_000L);
        return Math.max(0, Math.min(s, commitsPerSecond.length() - 1));
    }

    /** One transfer thread: random pairs, random amounts, until stopped. */
    void transfers(int thread) {
        SplittableRandom rnd = new SplittableRandom(f.seed * 1_000_003L + thread);
        Histogram h = new Histogram(3);
        try {
            while (!stop.get()) {
                int from = rnd.nextInt(f.accounts);
                int to = rnd.nextInt(f.accounts - 1);
                if (to >= from) {
                    to++;
                }
                long amount = 1 + rnd.nextInt(f.maxAmount);
                transferOnce(from, to, amount, h);
            }
        } finally {
            synchronized (transferLatencyUs) {
                transferLatencyUs.add(h);
            }
        }
    }

    private void transferOnce(int from, int to, long amount, Histogram h) {
        long t0 = System.nanoTime();
        long[] began = new long[1];
        int[] attempts = new int[1];
        try {
            tm.run(tx -> {
                if (attempts[0]++ > 0) {
                    abortsPerSecond.incrementAndGet(second(System.nanoTime()));
                }
                began[0] = System.nanoTime(); // after begin() returned: the transaction has its start timestamp
                move(tx, from, to, amount);
                return null;
            });
            long done = System.nanoTime();
            ledger.committed(from, to, amount);
            committed.incrementAndGet();
            commitsPerSecond.incrementAndGet(second(done));
            clock.committed(began[0], done);
            h.recordValue(Math.max(1, (done - t0) / 1000));
        } catch (RollbackException e) {
            gaveUp.incrementAndGet();
            problem("transfer gave up after " + attempts[0] + " attempts: " + e.getMessage());
        } catch (CommitOutcomeUnknownException e) {
            ledger.outcomeUnknown();
            problem("commit outcome unknown: " + e.getMessage());
        } catch (RuntimeException e) {
            errors.incrementAndGet();
            problem("transfer failed: " + e);
            pause();
        } finally {
            aborted.addAndGet(Math.max(0, attempts[0] - 1));
        }
    }

    private void move(Transaction tx, int from, int to, long amount) {
        try {
            Result[] r = accounts.get(tx, List.of(new Get(key(from)).addColumn(CF, BALANCE),
                    new Get(key(to)).addColumn(CF, BALANCE)));
            accounts.put(tx, List.of(
                    new Put(key(from)).addColumn(CF, BALANCE, Bytes.toBytes(balance(r[0], from) - amount)),
                    new Put(key(to)).addColumn(CF, BALANCE, Bytes.toBytes(balance(r[1], to) + amount))));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long balance(Result r, int account) {
        byte[] v = r.getValue(CF, BALANCE);
        if (v == null) {
            throw new IllegalStateException(accountName(account) + " has no balance in this snapshot");
        }
        return Bytes.toLong(v);
    }

    /** One auditor: scans every account in a read-only transaction and checks count and total, until stopped. */
    void audits() {
        Histogram h = new Histogram(3);
        try {
            while (!stop.get()) {
                long t0 = System.nanoTime();
                try {
                    Long[] balances = readAll(tm, accounts, f.accounts);
                    long total = 0;
                    int found = 0;
                    for (Long b : balances) {
                        if (b != null) {
                            total += b;
                            found++;
                        }
                    }
                    audits.incrementAndGet();
                    h.recordValue(Math.max(1, (System.nanoTime() - t0) / 1000));
                    if (total != ledger.expectedTotal() || found != f.accounts) {
                        auditViolations.incrementAndGet();
                        problem("audit saw " + found + " accounts totalling " + total + ", expected " + f.accounts
                                + " totalling " + ledger.expectedTotal());
                    }
                } catch (IOException | RuntimeException e) {
                    auditErrors.incrementAndGet();
                    problem("audit failed: " + e);
                    pause();
                }
            }
        } finally {
            synchronized (auditLatencyUs) {
                auditLatencyUs.add(h);
            }
        }
    }

    /** Every account's balance in one snapshot ({@code null} where an account is missing). */
    static Long[] readAll(TransactionManager tm, TTable accounts, int n) throws IOException {
        Transaction tx = tm.begin();
        Long[] balances = new Long[n];
        try (ResultScanner scanner = accounts.getScanner(tx, new Scan().addColumn(CF, BALANCE).setCaching(1000))) {
            for (Result r : scanner) {
                String row = Bytes.toString(r.getRow());
                int i = Integer.parseInt(row.substring(row.indexOf('-') + 1));
                byte[] v = r.getValue(CF, BALANCE);
                if (i >= 0 && i < n && v != null) {
                    balances[i] = Bytes.toLong(v);
                }
            }
        }
        try {
            tm.commit(tx); // read-only: commits locally
        } catch (RollbackException e) {
            throw new IllegalStateException("a read-only transaction was rolled back: " + e.getMessage(), e);
        }
        return balances;
    }

    private void problem(String p) {
        if (problems.size() < 20) {
            problems.add(p);
        }
    }

    private static void pause() {
        try {
            TimeUnit.MILLISECONDS.sleep(100); // a persistent failure must not spin the CPU the others need
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
