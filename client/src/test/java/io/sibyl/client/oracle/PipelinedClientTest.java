package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Thousands of requests outstanding on one pipelined connection at once, from one thread and from several, over each
 * {@link OracleTransport} (with the waiting-thread one nobody here waits through the client: its poller reads). Every
 * future must complete; timestamps must be unique and ordered; and the committed set must satisfy snapshot isolation's
 * write-write rule: no two committed transactions that overlapped in time wrote the same row, and every conflict abort
 * is explained by a committed overlapping writer of a shared row.
 */
class PipelinedClientTest {
    // Tables large enough that nothing is evicted: T_max stays 0 and every abort in these tests is a conflict.
    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 18, 1 << 16, 1 << 14));

    /** A client of the oracle at {@code port} whose frames travel as {@code transport} says. */
    private static OracleClient connect(int port, OracleTransport transport) throws InterruptedException {
        return OracleClient.connect("127.0.0.1", port, 10_000, OracleCredentials.newClient(), transport);
    }

    /** One transaction's fate as the client saw it. */
    record Tx(long start, long[] rows, long commit, TransactionAbortedException.Reason abortReason) {
        boolean committed() {
            return commit > 0;
        }
    }

    private static long[] randomRows(Random rnd, String table, int keySpace) {
        int n = 1 + rnd.nextInt(3);
        Set<Long> rows = new HashSet<>();
        while (rows.size() < n) {
            rows.add(RowIds.of(table, ByteBuffer.allocate(4).putInt(rnd.nextInt(keySpace)).array()));
        }
        return rows.stream().mapToLong(Long::longValue).toArray();
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Waits for a commit future and records the outcome; anything but a commit or an abort fails the test. */
    private static Tx outcome(long start, long[] rows, CompletableFuture<Long> commit) throws Exception {
        try {
            return new Tx(start, rows, commit.get(10, TimeUnit.SECONDS), null);
        } catch (ExecutionException e) {
            Throwable cause = unwrap(e);
            if (cause instanceof TransactionAbortedException a) {
                assertEquals(start, a.startTimestamp());
                return new Tx(start, rows, 0, a.reason());
            }
            throw new AssertionError("commit of " + start + " failed unexpectedly", cause);
        }
    }

    /** Checks uniqueness, ordering and the write-write rule over a history of finished transactions. */
    private static void assertSnapshotIsolation(List<Tx> history) {
        Set<Long> timestamps = new HashSet<>();
        for (Tx t : history) {
            assertTrue(t.start() > 0, "start timestamp must be positive: " + t);
            assertTrue(timestamps.add(t.start()), "start timestamp handed out twice: " + t.start());
        }
        int committed = 0;
        for (Tx t : history) {
            if (t.committed()) {
                committed++;
                assertTrue(t.commit() > t.start(), "commit must follow start: " + t);
                assertTrue(timestamps.add(t.commit()), "commit timestamp " + t.commit()
                        + " equals another start or commit timestamp");
            } else {
                assertEquals(TransactionAbortedException.Reason.CONFLICT, t.abortReason(),
                        "nothing is evicted in this test, so only conflicts may abort: " + t);
            }
        }
        assertTrue(committed > 0, "some transactions must commit");
        assertTrue(committed < history.size(), "the key space is small enough that some transactions must conflict");

        Map<Long, List<Tx>> writersByRow = new HashMap<>();
        for (Tx t : history) {
            if (t.committed()) {
                for (long r : t.rows()) {
                    writersByRow.computeIfAbsent(r, k -> new ArrayList<>()).add(t);
                }
            }
        }
        for (Map.Entry<Long, List<Tx>> e : writersByRow.entrySet()) {
            List<Tx> ws = new ArrayList<>(e.getValue());
            ws.sort((a, b) -> Long.compare(a.start(), b.start()));
            // Sorted by start, committed writers of one row must form a chain of disjoint intervals.
            for (int i = 1; i < ws.size(); i++) {
                Tx prev = ws.get(i - 1);
                Tx next = ws.get(i);
                if (prev.commit() > next.start()) {
                    fail("lost update on row " + e.getKey() + ": committed transactions " + prev + " and " + next
                            + " overlap in time and both wrote it");
                }
            }
        }
        for (Tx t : history) {
            if (t.committed()) {
                continue;
            }
            boolean explained = false;
            for (long r : t.rows()) {
                for (Tx w : writersByRow.getOrDefault(r, List.of())) {
                    if (w.commit() > t.start()) {
                        explained = true;
                        break;
                    }
                }
            }
            assertTrue(explained, "transaction " + t.start() + " was aborted for a conflict, but no transaction"
                    + " that committed after it started wrote any of its rows");
        }
    }

    /** The replica of the client that did the work must reflect every outcome as soon as the futures completed. */
    private static void assertReplicaAgrees(OracleClient client, List<Tx> history) throws Exception {
        CommitReplica replica = client.replica();
        for (Tx t : history) {
            if (t.committed()) {
                assertEquals(t.commit(), replica.commitTimestampOf(t.start()), "own commit missing in replica: " + t);
            } else {
                assertTrue(replica.isAborted(t.start()), "own abort missing in replica: " + t);
            }
        }
        long reader = client.begin().get(5, TimeUnit.SECONDS);
        for (Tx t : history) {
            assertEquals(t.committed(), client.inSnapshot(t.start(), reader).get(5, TimeUnit.SECONDS),
                    "visibility of " + t + " to a reader that started after all of them");
        }
        client.finish(reader);
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void twoThousandBeginsOutstandingThenTwoThousandCommitsOutstandingOnOneConnection(OracleTransport transport)
            throws Exception {
        int n = 2000;
        Random rnd = new Random(1);
        try (OracleClient client = connect(oracle.port(), transport)) {
            List<CompletableFuture<Long>> begins = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                begins.add(client.begin());
            }
            long[] starts = new long[n];
            for (int i = 0; i < n; i++) {
                starts[i] = begins.get(i).get(10, TimeUnit.SECONDS);
            }
            List<long[]> rows = new ArrayList<>();
            List<CompletableFuture<Long>> commits = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                long[] r = randomRows(rnd, "pipelined-all-overlap", 1500);
                rows.add(r);
                commits.add(client.commit(starts[i], r));
            }
            List<Tx> history = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                history.add(outcome(starts[i], rows.get(i), commits.get(i)));
            }
            assertSnapshotIsolation(history);
            // Every transaction overlapped every other, so each row has at most one committed writer: the first.
            Set<Long> written = new HashSet<>();
            for (Tx t : history) {
                if (t.committed()) {
                    for (long r : t.rows()) {
                        assertTrue(written.add(r), "two overlapping transactions both committed row " + r);
                    }
                }
            }
            assertReplicaAgrees(client, history);
            assertTrue(client.isOpen());
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void twoThousandBeginCommitChainsLaunchedAtOnceOnOneConnection(OracleTransport transport) throws Exception {
        int n = 2000;
        Random rnd = new Random(2);
        try (OracleClient client = connect(oracle.port(), transport)) {
            List<long[]> rows = new ArrayList<>();
            List<CompletableFuture<Long>> starts = new ArrayList<>();
            List<CompletableFuture<Long>> commits = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                long[] r = randomRows(rnd, "pipelined-chains", 400);
                CompletableFuture<Long> start = client.begin();
                rows.add(r);
                starts.add(start);
                // Runs on the thread that reads the reply: submitting from there must work too.
                commits.add(start.thenCompose(s -> client.commit(s, r)));
            }
            List<Tx> history = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                history.add(outcome(starts.get(i).get(10, TimeUnit.SECONDS), rows.get(i), commits.get(i)));
            }
            assertSnapshotIsolation(history);
            assertReplicaAgrees(client, history);
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void eightThreadsShareOneConnectionWithFiftyTransactionsInFlightEach(OracleTransport transport) throws Exception {
        int threads = 8;
        int perThread = 300;
        try (OracleClient client = connect(oracle.port(), transport)) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<List<Object[]>>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int seed = t;
                    results.add(pool.submit(() -> {
                        Random rnd = new Random(100 + seed);
                        Semaphore window = new Semaphore(50);
                        List<Object[]> mine = Collections.synchronizedList(new ArrayList<>());
                        for (int i = 0; i < perThread; i++) {
                            window.acquire();
                            long[] r = randomRows(rnd, "pipelined-threads", 600);
                            boolean readOnly = rnd.nextInt(10) == 0;
                            CompletableFuture<Long> start = client.begin();
                            CompletableFuture<Long> commit = start.thenCompose(s -> readOnly
                                    ? client.commit(s, new long[0]) : client.commit(s, r));
                            mine.add(new Object[] {start, readOnly ? new long[0] : r, commit});
                            commit.whenComplete((v, e) -> window.release());
                        }
                        window.acquire(50);
                        return mine;
                    }));
                }
                List<Tx> history = new ArrayList<>();
                Set<Long> readOnlyStarts = new HashSet<>();
                for (Future<List<Object[]>> f : results) {
                    for (Object[] o : f.get(15, TimeUnit.SECONDS)) {
                        @SuppressWarnings("unchecked")
                        long start = ((CompletableFuture<Long>) o[0]).get(1, TimeUnit.SECONDS);
                        long[] r = (long[]) o[1];
                        @SuppressWarnings("unchecked")
                        CompletableFuture<Long> commit = (CompletableFuture<Long>) o[2];
                        if (r.length == 0) {
                            assertEquals(start, commit.get(1, TimeUnit.SECONDS), "a read-only finish returns startTs");
                            assertTrue(readOnlyStarts.add(start), "start timestamp handed out twice: " + start);
                        } else {
                            history.add(outcome(start, r, commit));
                        }
                    }
                }
                assertEquals(threads * perThread, history.size() + readOnlyStarts.size());
                for (Tx t : history) {
                    assertFalse(readOnlyStarts.contains(t.start()), "start timestamp handed out twice: " + t.start());
                }
                assertSnapshotIsolation(history);
                assertReplicaAgrees(client, history);
                assertNotNull(client.replica());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void requestsOfManyThreadsAreAnsweredWithDistinctIncreasingTimestampsPerThread(OracleTransport transport)
            throws Exception {
        int threads = 6;
        int perThread = 500;
        try (OracleClient client = connect(oracle.port(), transport)) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<long[]>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        List<CompletableFuture<Long>> fs = new ArrayList<>();
                        for (int i = 0; i < perThread; i++) {
                            fs.add(client.begin());
                        }
                        long[] ts = new long[perThread];
                        for (int i = 0; i < perThread; i++) {
                            ts[i] = fs.get(i).get(10, TimeUnit.SECONDS);
                            client.finish(ts[i]);
                        }
                        return ts;
                    }));
                }
                Set<Long> all = new HashSet<>();
                for (Future<long[]> f : results) {
                    long[] ts = f.get(15, TimeUnit.SECONDS);
                    for (int i = 0; i < ts.length; i++) {
                        assertTrue(all.add(ts[i]), "start timestamp handed out twice: " + ts[i]);
                        if (i > 0) {
                            // One connection is FIFO: requests one thread issued in order are answered in order.
                            assertTrue(ts[i] > ts[i - 1], "a thread's later begin got an older timestamp");
                        }
                    }
                }
                assertEquals(threads * perThread, all.size());
                assertInstanceOf(CommitReplica.class, client.replica());
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
