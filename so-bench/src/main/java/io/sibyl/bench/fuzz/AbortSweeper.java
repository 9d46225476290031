package io.sibyl.bench.fuzz;

import io.sibyl.client.oracle.OracleClient;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The sweeper's part, as bin/sibyl-sweep plays it in production: with the admin role it reports the aborted
 * transactions of lost connections cleaned up (the attackers' wrote nothing). Without it the attackers' dropped
 * connections would fill max.aborted.transactions within the run and the oracle would refuse every BEGIN, as
 * documented, until a sweep.
 */
final class AbortSweeper implements Runnable {
    private static final long PAUSE_MILLIS = 500;
    private static final int MOST_PER_ROUND = 20_000;

    private final OracleClient admin;
    private final GoodTransactions good;
    private final GoodOutcomes outcomes;
    private final BooleanSupplier stop;
    /**
     * Reported but still in the replica's aborted set (the oracle forgets a transaction a while after its report):
     * not reported again, nor counted twice. Only what the replica still holds is kept, so it stays as small.
     */
    private Set<Long> reported = new HashSet<>();

    AbortSweeper(OracleClient admin, GoodTransactions good, GoodOutcomes outcomes, BooleanSupplier stop) {
        this.admin = admin;
        this.good = good;
        this.outcomes = outcomes;
        this.stop = stop;
    }

    @Override
    public void run() {
        try {
            while (!stop.getAsBoolean()) {
                Thread.sleep(PAUSE_MILLIS);
                sweepOnce();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void sweepOnce() throws InterruptedException {
        List<CompletableFuture<Void>> reports = new ArrayList<>();
        Set<Long> stillAborted = new HashSet<>();
        for (long ts : admin.replica().abortedBelow(Long.MAX_VALUE)) {
            if (reported.contains(ts)) {
                stillAborted.add(ts);
            } else if (reports.size() < MOST_PER_ROUND && !good.isUnfinished(ts)) {
                // (a good client reports its own, after it has checked the abort)
                reports.add(admin.cleanedUp(ts));
                stillAborted.add(ts);
            }
        }
        reported = stillAborted;
        for (CompletableFuture<Void> r : reports) {
            try {
                r.get(10, TimeUnit.SECONDS);
                outcomes.swept.increment();
            } catch (ExecutionException | TimeoutException e) {
                outcomes.wrongAnswer("the admin's CLEANED_UP report failed: " + e);
                return;
            }
        }
    }
}
