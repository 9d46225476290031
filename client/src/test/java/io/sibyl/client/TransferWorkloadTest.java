package io.sibyl.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bank transfers between random account pairs from 16 threads (two managers: one buffering writes, one sending them
 * at once), with deliberate rollbacks mixed in, while auditors scan all accounts in read-only snapshots. Every audit
 * sees the same total, and at the end each account holds its opening balance plus exactly the committed transfers.
 */
@ExtendWith(MiniCluster.class)
class TransferWorkloadTest {
    static final int ACCOUNTS = 64;
    static final long OPENING = 1000;
    static final int THREADS = 16;
    static final int TRANSFERS_PER_THREAD = 200;

    @Test
    void transfersBetweenRandomAccountsKeepTheTotalConstant() throws Exception {
        MiniCluster c = MiniCluster.get();
        Map<String, String> retries = Map.of(TransactionManager.RETRY_ATTEMPTS, "100",
                TransactionManager.RETRY_BACKOFF_MS, "2", TransactionManager.RETRY_BACKOFF_MAX_MS, "50");
        try (TransactionManager buffered = c.manager(retries);
             TransactionManager writeThrough = c.manager(Map.of(TransactionManager.RETRY_ATTEMPTS, "100",
                     TransactionManager.RETRY_BACKOFF_MS, "2", TransactionManager.RETRY_BACKOFF_MAX_MS, "50",
                     TransactionManager.WRITE_BUFFER_BYTES, "0", TransactionManager.READ_VERSIONS, "1"));
             TTable table = new TTable(c.connection(), c.createTable("accounts", "cf"))) {
            Accounts accounts = new Accounts(table, ACCOUNTS);
            Transaction open = buffered.begin();
            accounts.open(open, OPENING);
            buffered.commit(open);

            AtomicLongArray delta = new AtomicLongArray(ACCOUNTS);
            AtomicInteger committed = new AtomicInteger();
            AtomicInteger rolledBack = new AtomicInteger();
            AtomicLong attempts = new AtomicLong();
            AtomicInteger audits = new AtomicInteger();
            AtomicBoolean workersDone = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int w = 0; w < THREADS; w++) {
                TransactionManager tm = w % 2 == 0 ? buffered : writeThrough;
                Thread th = new Thread(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    try {
                        for (int n = 0; n < TRANSFERS_PER_THREAD; n++) {
                            int from = rnd.nextInt(ACCOUNTS);
                            int to = (from + 1 + rnd.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                            long amount = 1 + rnd.nextInt(50);
                            boolean giveUp = rnd.nextInt(20) == 0;
                            Boolean done = tm.run(tx -> {
                                attempts.incrementAndGet();
                                try {
                                    accounts.transfer(tx, from, to, amount);
                                    if (giveUp) {
                                        tm.rollback(tx);
                                        return false;
                                    }
                                    return true;
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            });
                            if (done) {
                                delta.addAndGet(from, -amount);
                                delta.addAndGet(to, amount);
                                committed.incrementAndGet();
                            } else {
                                rolledBack.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "transfer-" + w);
                threads.add(th);
            }
            for (int a = 0; a < 2; a++) {
                TransactionManager tm = a == 0 ? buffered : writeThrough;
                Thread auditor = new Thread(() -> {
                    try {
                        while (!workersDone.get()) {
                            Transaction tx = tm.begin();
                            assertEquals(ACCOUNTS * OPENING, accounts.total(tx), "an audit saw a torn transfer");
                            tm.commit(tx);
                            audits.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "auditor-" + a);
                threads.add(auditor);
            }
            threads.forEach(Thread::start);
            for (Thread th : threads.subList(0, THREADS)) {
                th.join(240_000);
            }
            workersDone.set(true);
            for (Thread th : threads) {
                th.join(30_000);
                assertTrue(!th.isAlive(), th.getName() + " did not finish");
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError("workload failed: " + failures.peek(), failures.peek());
                failures.stream().skip(1).limit(5).forEach(e::addSuppressed);
                throw e;
            }
            System.out.printf("transfers: %d committed, %d rolled back on purpose, %d attempts (%d conflicts retried),"
                            + " %d audits, %.1f s, %.0f commits/s%n", committed.get(), rolledBack.get(),
                    attempts.get(), attempts.get() - committed.get() - rolledBack.get(), audits.get(), secs,
                    committed.get() / secs);
            assertEquals(THREADS * TRANSFERS_PER_THREAD, committed.get() + rolledBack.get());
            assertTrue(audits.get() > 0);
            Transaction check = buffered.begin();
            assertEquals(ACCOUNTS * OPENING, accounts.total(check));
            for (int i = 0; i < ACCOUNTS; i++) {
                assertEquals(OPENING + delta.get(i), accounts.balance(check, i),
                        "balance of " + Accounts.account(i) + " (a lost or phantom update)");
            }
            buffered.commit(check);
        }
    }
}
