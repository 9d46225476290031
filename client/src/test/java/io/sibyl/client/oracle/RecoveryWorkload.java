package io.sibyl.client.oracle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A commit workload against one oracle that remembers what every client was told: acknowledged commits, refused
 * commits, commits whose answer never came (the oracle died), and transactions begun and never finished. After the
 * oracle is replaced through recovery, {@link #checkAfterRecovery} asserts the promises on a new connection.
 */
final class RecoveryWorkload {
    /** Acknowledged commits: start timestamp to commit timestamp. */
    final Map<Long, Long> acked = new ConcurrentHashMap<>();
    /** Commits the oracle refused, and transactions the client aborted: aborted whatever happens. */
    final Set<Long> refused = ConcurrentHashMap.newKeySet();
    /** Commits sent without an answer: either outcome is allowed, but it must be one. */
    final Set<Long> unanswered = ConcurrentHashMap.newKeySet();
    /** Begun, never committed or aborted: running when the oracle died. */
    final Set<Long> running = ConcurrentHashMap.newKeySet();
    /** Largest timestamp any client was given (start or commit). */
    final AtomicLong maxTimestamp = new AtomicLong();
    private final int rows;

    RecoveryWorkload(int rows) {
        this.rows = rows;
    }

    private void saw(long ts) {
        maxTimestamp.accumulateAndGet(ts, Math::max);
    }

    /**
     * {@code threads} threads run write transactions of 1 to 3 rows on {@code client} until each did
     * {@code perThread} or {@code stop} is set or the oracle goes away; one in ten is aborted by the client instead.
     * Returns the threads, started.
     */
    List<Thread> start(OracleClient client, int threads, int perThread, AtomicBoolean stop) {
        List<Thread> out = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            long seed = i;
            Thread t = new Thread(() -> run(client, perThread, stop, new Random(seed)), "recovery-load-" + i);
            t.setDaemon(true);
            t.start();
            out.add(t);
        }
        return out;
    }

    private void run(OracleClient client, int count, AtomicBoolean stop, Random random) {
        for (int i = 0; i < count && !stop.get(); i++) {
            long t;
            try {
                t = client.begin().get(10, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                return; // the oracle went away
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            saw(t);
            if (random.nextInt(10) == 0) {
                running.add(t); // until the abort is acknowledged
                try {
                    client.abort(t).get(10, TimeUnit.SECONDS);
                    running.remove(t);
                    refused.add(t);
                } catch (ExecutionException | TimeoutException e) {
                    return; // the abort may or may not be journaled: stays "running", must end aborted
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                continue;
            }
            long[] rowIds = new long[1 + random.nextInt(3)];
            for (int k = 0; k < rowIds.length; k++) {
                rowIds[k] = RowIds.of("recovery", new byte[] {(byte) random.nextInt(rows), (byte) k});
            }
            unanswered.add(t);
            try {
                long c = client.commit(t, rowIds).get(10, TimeUnit.SECONDS);
                saw(c);
                acked.put(t, c);
                unanswered.remove(t);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof TransactionAbortedException) {
                    unanswered.remove(t);
                    refused.add(t);
                } else {
                    return; // no answer: the outcome is unknown to this client
                }
            } catch (TimeoutException e) {
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Begins {@code n} transactions that never finish. */
    void leaveRunning(OracleClient client, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            long t = client.begin().get(10, TimeUnit.SECONDS);
            saw(t);
            running.add(t);
        }
    }

    /** Starts a transaction on {@code client} to read with. */
    static long reader(OracleClient client) throws Exception {
        return client.begin().get(10, TimeUnit.SECONDS);
    }

    /**
     * On a connection to the recovered oracle: every acknowledged commit is committed (and visible to a new
     * reader); every refused or running transaction is aborted (invisible, and cannot commit any more); every
     * unanswered commit has one outcome that the replica and the oracle agree on; and new timestamps are above every
     * old one.
     */
    void checkAfterRecovery(OracleClient client, boolean tryCommits) throws Exception {
        long reader = reader(client);
        assertTrue(reader > maxTimestamp.get(), "new timestamp " + reader + " must exceed every timestamp handed out"
                + " before (" + maxTimestamp.get() + ")");
        CommitReplica replica = client.replica();
        for (Map.Entry<Long, Long> e : acked.entrySet()) {
            long t = e.getKey();
            TransactionStatus s = client.query(t).get(10, TimeUnit.SECONDS);
            assertTrue(s.isCommitted(), "acknowledged commit " + t + " -> " + e.getValue() + " reads " + s);
            if (s.state() == TransactionStatus.State.COMMITTED) {
                assertEquals(e.getValue(), s.commitTimestamp(), "commit timestamp of " + t);
            }
            assertNotEquals(Visibility.INVISIBLE, replica.inSnapshot(t, reader), "acknowledged commit " + t);
            assertTrue(client.inSnapshot(t, reader).get(10, TimeUnit.SECONDS), "acknowledged commit " + t);
        }
        List<Long> aborted = new ArrayList<>(refused);
        aborted.addAll(running);
        for (long t : aborted) {
            TransactionStatus s = client.query(t).get(10, TimeUnit.SECONDS);
            assertEquals(TransactionStatus.State.ABORTED, s.state(), "aborted or running at the crash: " + t);
            assertEquals(Visibility.INVISIBLE, replica.inSnapshot(t, reader), "aborted or running: " + t);
            assertFalse(client.inSnapshot(t, reader).get(10, TimeUnit.SECONDS), "aborted or running: " + t);
        }
        if (tryCommits) {
            for (long t : running) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> client.commit(t,
                        new long[] {RowIds.of("recovery", new byte[] {9})}).get(10, TimeUnit.SECONDS),
                        "a transaction running at the crash cannot commit after it: " + t);
                TransactionAbortedException a = assertInstanceOf(TransactionAbortedException.class, e.getCause());
                assertEquals(TransactionAbortedException.Reason.ALREADY_ABORTED, a.reason());
            }
        }
        for (long t : unanswered) {
            TransactionStatus s = client.query(t).get(10, TimeUnit.SECONDS);
            boolean committed = s.isCommitted();
            assertTrue(committed || s.state() == TransactionStatus.State.ABORTED, "unanswered " + t + ": " + s);
            assertEquals(committed, client.inSnapshot(t, reader).get(10, TimeUnit.SECONDS), "unanswered " + t
                    + " reads " + s + " from the oracle");
        }
        client.finish(reader);
    }

    @Override
    public String toString() {
        return acked.size() + " acknowledged, " + refused.size() + " refused or aborted, " + unanswered.size()
                + " unanswered, " + running.size() + " running, max timestamp " + maxTimestamp.get();
    }
}
