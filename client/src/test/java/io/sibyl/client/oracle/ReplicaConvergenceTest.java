package io.sibyl.client.oracle;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.oracle.OracleExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hundred connections sharing two I/O threads, each with its own replica of the commit metadata. Writers commit,
 * conflict and abort through a few of them (some connections join half-way, after part of the history). Then every
 * connection starts a reader, and every replica must give the same snapshot answer for every writer: committed before
 * the reader started means visible, otherwise (aborted, or committed after the reader started) invisible. Where a
 * writer started after a replica's T_init the replica must also know its exact fate locally.
 */
class ReplicaConvergenceTest {
    private static final int EARLY_CONNECTIONS = 80;
    private static final int LATE_CONNECTIONS = 20;

    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 16, 1 << 14, 1 << 12));
    private static EventLoopGroup group;

    @BeforeAll
    static void startClientThreads() {
        group = new NioEventLoopGroup(2, new DefaultThreadFactory("replica-test-client", true));
    }

    @AfterAll
    static void stopClientThreads() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }

    /** A writer's fate; {@code commit == 0} means aborted (by conflict or by its client). */
    record Writer(long start, long commit, boolean explicitAbort) {
        boolean committed() {
            return commit > 0;
        }
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Began transactions, finished later by {@link #finishAll}: commit (maybe conflicting) or explicit abort. */
    private static final class Batch {
        final List<OracleClient> via = new ArrayList<>();
        final List<CompletableFuture<Long>> starts = new ArrayList<>();
    }

    private static Batch beginAll(List<OracleClient> writers, int perWriter) {
        Batch b = new Batch();
        for (OracleClient c : writers) {
            for (int i = 0; i < perWriter; i++) {
                b.via.add(c);
                b.starts.add(c.begin());
            }
        }
        return b;
    }

    private static List<Writer> finishAll(Batch b, Random rnd) throws Exception {
        int n = b.starts.size();
        long[] starts = new long[n];
        List<CompletableFuture<?>> outcomes = new ArrayList<>();
        boolean[] explicit = new boolean[n];
        for (int i = 0; i < n; i++) {
            starts[i] = b.starts.get(i).get(10, TimeUnit.SECONDS);
            OracleClient c = b.via.get(i);
            if (rnd.nextInt(5) == 0) {
                explicit[i] = true;
                outcomes.add(c.abort(starts[i]));
            } else {
                int rows = 1 + rnd.nextInt(2);
                long[] r = new long[rows];
                for (int k = 0; k < rows; k++) {
                    r[k] = RowIds.of("convergence", ByteBuffer.allocate(4).putInt(rnd.nextInt(120)).array());
                }
                outcomes.add(c.commit(starts[i], r));
            }
        }
        List<Writer> writers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            try {
                Object v = outcomes.get(i).get(10, TimeUnit.SECONDS);
                writers.add(new Writer(starts[i], explicit[i] ? 0 : (Long) v, explicit[i]));
            } catch (ExecutionException e) {
                Throwable cause = unwrap(e);
                if (!(cause instanceof TransactionAbortedException)) {
                    throw new AssertionError("transaction " + starts[i] + " failed unexpectedly", cause);
                }
                writers.add(new Writer(starts[i], 0, false));
            }
        }
        return writers;
    }

    @Test
    void hundredConnectionsOnTwoThreadsAgreeOnEveryWritersVisibility() throws Exception {
        runScenario(oracle.port(), group, true);
    }

    /**
     * The scenario, reusable against an oracle with other capacities. With {@code exactCommitTimestamps} false the
     * oracle may move T_max (evictions), so a replica may have dropped a commit timestamp at or below its T_max.
     */
    static void runScenario(int port, EventLoopGroup group, boolean exactCommitTimestamps) throws Exception {
        Random rnd = new Random(7);
        List<OracleClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < EARLY_CONNECTIONS; i++) {
                clients.add(OracleClient.connect("127.0.0.1", port, group));
            }
            // Phase 1: ten early connections write; all hundred transactions overlap, so many conflict.
            List<Writer> history = new ArrayList<>(finishAll(beginAll(clients.subList(0, 10), 30), rnd));

            for (int i = 0; i < LATE_CONNECTIONS; i++) {
                clients.add(OracleClient.connect("127.0.0.1", port, group));
            }
            // Phase 2: writers on old and new connections begin; every connection then starts an "early" reader;
            // only then do the writers finish, so they commit after those readers started.
            List<OracleClient> phase2 = new ArrayList<>(clients.subList(0, 5));
            phase2.addAll(clients.subList(EARLY_CONNECTIONS, EARLY_CONNECTIONS + 5));
            Batch batch2 = beginAll(phase2, 25);
            for (CompletableFuture<Long> f : batch2.starts) {
                f.get(10, TimeUnit.SECONDS);
            }
            List<CompletableFuture<Long>> earlyReaders = new ArrayList<>();
            for (OracleClient c : clients) {
                earlyReaders.add(c.begin());
            }
            long[] early = new long[clients.size()];
            for (int i = 0; i < early.length; i++) {
                early[i] = earlyReaders.get(i).get(10, TimeUnit.SECONDS);
            }
            history.addAll(finishAll(batch2, rnd));

            long committed = history.stream().filter(Writer::committed).count();
            long explicitAborts = history.stream().filter(Writer::explicitAbort).count();
            assertTrue(committed > 0, "some writers must commit");
            assertTrue(history.size() - committed - explicitAborts > 0, "some writers must be aborted by the oracle");
            assertTrue(explicitAborts > 0, "some writers must be aborted by their client");

            // Now every connection begins one more transaction: its replica then holds all metadata so far.
            List<CompletableFuture<Long>> lateReaders = new ArrayList<>();
            for (OracleClient c : clients) {
                lateReaders.add(c.begin());
            }
            long[] late = new long[clients.size()];
            for (int i = 0; i < late.length; i++) {
                late[i] = lateReaders.get(i).get(10, TimeUnit.SECONDS);
            }

            List<String> disagreements = new ArrayList<>();
            List<CompletableFuture<Boolean>> answers = new ArrayList<>();
            List<String> questions = new ArrayList<>();
            List<Boolean> expected = new ArrayList<>();
            for (int i = 0; i < clients.size(); i++) {
                OracleClient c = clients.get(i);
                CommitReplica replica = c.replica();
                for (Writer w : history) {
                    for (long reader : new long[] {early[i], late[i]}) {
                        answers.add(c.inSnapshot(w.start(), reader));
                        questions.add("connection " + i + " (T_init " + replica.tInit() + "), reader " + reader
                                + ", writer " + w);
                        expected.add(w.committed() && w.commit() < reader);
                    }
                    if (w.start() >= replica.tInit()) {
                        if (replica.isAborted(w.start()) != !w.committed()) {
                            disagreements.add("connection " + i + ": isAborted(" + w.start() + ") = "
                                    + replica.isAborted(w.start()) + " for " + w);
                        }
                        long held = replica.commitTimestampOf(w.start());
                        boolean forgotten = !exactCommitTimestamps && held == 0 && w.committed()
                                && w.commit() <= replica.tMax();
                        if (held != w.commit() && !forgotten) {
                            disagreements.add("connection " + i + ": commitTimestampOf(" + w.start() + ") = "
                                    + replica.commitTimestampOf(w.start()) + " for " + w);
                        }
                    }
                }
            }
            for (int q = 0; q < answers.size(); q++) {
                boolean got = answers.get(q).get(10, TimeUnit.SECONDS);
                if (got != expected.get(q)) {
                    disagreements.add(questions.get(q) + ": inSnapshot = " + got + ", expected " + expected.get(q));
                }
            }
            assertEquals(List.of(), disagreements.subList(0, Math.min(20, disagreements.size())),
                    disagreements.size() + " disagreements");
            for (OracleClient c : clients) {
                assertTrue(c.isOpen());
            }
        } finally {
            for (OracleClient c : clients) {
                c.close();
            }
        }
    }
}
