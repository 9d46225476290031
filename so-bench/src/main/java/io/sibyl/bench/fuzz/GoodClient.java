package io.sibyl.bench.fuzz;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleException;
import io.sibyl.client.oracle.TransactionAbortedException;
import io.sibyl.client.oracle.TransactionStatus;
import io.sibyl.protocol.Wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * A well-behaved client on {@link OracleClient}: transactions one after another on rows that the other good clients
 * write too, each answer checked against what this client did and saw (timestamps rise, a commit is then reported
 * committed at the same timestamp, an abort as aborted, nobody else aborted its transactions), and every commit kept
 * for the end-of-run snapshot-isolation check.
 */
final class GoodClient implements Runnable {
    private static final long ANSWER_TIMEOUT_MILLIS = 10_000;

    private final OracleClient client;
    private final Random rnd;
    private final int rowSpace;
    private final GoodTransactions good;
    private final CommitHistory history;
    private final GoodOutcomes outcomes;
    private final BooleanSupplier stop;
    private final List<long[]> myCommits = new ArrayList<>(); // {start, commit}
    private long highest;

    GoodClient(OracleClient client, Random rnd, int rowSpace, GoodTransactions good, CommitHistory history,
               GoodOutcomes outcomes, BooleanSupplier stop) {
        this.client = client;
        this.rnd = rnd;
        this.rowSpace = rowSpace;
        this.good = good;
        this.history = history;
        this.outcomes = outcomes;
        this.stop = stop;
    }

    /** The reason a good client stops: the oracle stopped answering it, which the run reports as a wrong answer. */
    private static final class Lost extends Exception {
        private static final long serialVersionUID = 1L;

        Lost(String message) {
            super(message, null, false, false);
        }
    }

    @Override
    public void run() {
        try {
            while (!stop.getAsBoolean()) {
                transaction();
                if (!myCommits.isEmpty() && rnd.nextInt(16) == 0) {
                    recheckOldCommit();
                }
            }
        } catch (Lost e) {
            outcomes.wrongAnswer(e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void transaction() throws Lost, InterruptedException {
        long start;
        try {
            start = await(client.begin(), "BEGIN");
        } catch (OracleException e) {
            if (e.code() != Wire.ERR_OVERLOADED) {
                throw new Lost("BEGIN refused with code " + e.code() + ": " + e.getMessage());
            }
            outcomes.refusedBegins.increment();
            Thread.sleep(10);
            return;
        } catch (TransactionAbortedException e) {
            throw new Lost("BEGIN answered with an abort: " + e.getMessage());
        }
        outcomes.transactions.increment();
        expect(start > highest, "start timestamp " + start + " is not above " + highest + ", seen before it");
        highest = start;
        good.begun(start);
        history.began(start);
        if (rnd.nextInt(4) == 0) {
            Thread.sleep(rnd.nextInt(3)); // a transaction that runs a while, for the attackers to aim at
            long watermark = uncheckedAwait(client.lowWatermark(), "WATERMARK_QUERY");
            expect(watermark <= start, "low watermark " + watermark + " passed running transaction " + start);
        }
        int action = rnd.nextInt(20);
        if (action < 16) {
            commit(start);
        } else if (action < 18) {
            uncheckedAwait(client.abort(start), "ABORT of its own transaction");
            outcomes.ownAborts.increment();
            expectAbortedThenCleanUp(start);
        } else {
            client.finish(start);
            outcomes.readOnly.increment();
        }
        good.finished(start);
    }

    private void commit(long start) throws Lost, InterruptedException {
        long[] rows = rnd.longs(1 + rnd.nextInt(4), 0, rowSpace).distinct().toArray();
        long commitTs;
        try {
            commitTs = await(client.commit(start, rows), "COMMIT");
        } catch (TransactionAbortedException e) {
            switch (e.reason()) {
                case CONFLICT -> outcomes.conflicts.increment();
                case TOO_OLD -> outcomes.tooOld.increment();
                default -> outcomes.wrongAnswer("transaction " + start + " was aborted by someone else: "
                        + e.getMessage());
            }
            expectAbortedThenCleanUp(start);
            return;
        } catch (OracleException e) {
            outcomes.wrongAnswer("COMMIT of " + start + " refused with code " + e.code() + ": " + e.getMessage());
            return;
        }
        expect(commitTs > start && commitTs > highest, "commit timestamp " + commitTs + " of " + start
                + " is not above every timestamp seen before (" + highest + ")");
        highest = Math.max(highest, commitTs);
        history.committed(start, commitTs, rows);
        outcomes.commits.increment();
        myCommits.add(new long[] {start, commitTs});
        expectCommitted(start, commitTs);
    }

    private void expectAbortedThenCleanUp(long start) throws Lost, InterruptedException {
        TransactionStatus status = uncheckedAwait(client.query(start), "QUERY");
        outcomes.queriesChecked.increment();
        expect(status.state() == TransactionStatus.State.ABORTED, "aborted " + start + ", but QUERY says " + status);
        uncheckedAwait(client.cleanedUp(start), "CLEANED_UP of its own aborted transaction");
    }

    private void recheckOldCommit() throws Lost, InterruptedException {
        long[] c = myCommits.get(rnd.nextInt(myCommits.size()));
        expectCommitted(c[0], c[1]);
    }

    private void expectCommitted(long start, long commitTs) throws Lost, InterruptedException {
        TransactionStatus status = uncheckedAwait(client.query(start), "QUERY");
        outcomes.queriesChecked.increment();
        boolean right = status.state() == TransactionStatus.State.COMMITTED && status.commitTimestamp() == commitTs
                || status.state() == TransactionStatus.State.COMMITTED_LONG_AGO;
        expect(right, start + " committed at " + commitTs + ", but QUERY says " + status);
    }

    private void expect(boolean right, String wrong) {
        if (!right) {
            outcomes.wrongAnswer(wrong);
        }
    }

    /** Waits for an answer that can be neither an abort nor a refusal; either is a wrong answer here. */
    private <T> T uncheckedAwait(CompletableFuture<T> future, String what) throws Lost, InterruptedException {
        try {
            return await(future, what);
        } catch (TransactionAbortedException | OracleException e) {
            throw new Lost(what + " answered with " + e);
        }
    }

    private <T> T await(CompletableFuture<T> future, String what) throws Lost, InterruptedException,
            TransactionAbortedException {
        try {
            return future.get(ANSWER_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new Lost("no answer to " + what + " within " + ANSWER_TIMEOUT_MILLIS + " ms");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TransactionAbortedException abort) {
                throw abort;
            }
            if (cause instanceof OracleException oe && oe.code() != 0) {
                throw oe;
            }
            throw new Lost(what + " failed: " + cause);
        }
    }
}
