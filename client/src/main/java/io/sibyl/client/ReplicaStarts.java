package io.sibyl.client;

import io.sibyl.client.oracle.LocalSnapshots;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleUnavailableException;

import java.util.concurrent.CompletionException;

/**
 * Begins read-only transactions from the local replica, with no round trip while it is fresh enough: the staleness
 * bound, tightened so that a snapshot includes this client's own latest fast-path write.
 */
final class ReplicaStarts {
    private final BeginContext context;
    /**
     * When this client's last fast-path write was acknowledged ({@link System#nanoTime}): a read-only snapshot must
     * be fresher than that to include it, since its version is above no timestamp this client has seen.
     */
    private volatile long fastPathCommittedNanos = System.nanoTime() - 86_400_000_000_000L;

    ReplicaStarts(BeginContext context) {
        this.context = context;
    }

    /** See {@link TransactionManager#beginReadOnly()}. */
    HBaseTransaction readOnly() {
        context.running().checkOpen();
        long stalenessNanos = Math.min(context.settings().readOnlyMaxStalenessMillis() * 1_000_000L,
                Math.max(1, System.nanoTime() - fastPathCommittedNanos));
        long deadline = context.failoverDeadline(System.nanoTime());
        HBaseTransaction tx;
        OracleClient client = null;
        while (true) {
            try {
                client = context.oracle().current();
                LocalSnapshots.Lease lease = context.replies().await(client.localSnapshots().take(stalenessNanos),
                        client, "the begin that refreshes its replica for a read-only transaction");
                tx = HBaseTransaction.fromReplica(context.manager(), client, lease);
                break;
            } catch (OracleUnavailableException e) {
                throw tooStale(client, e); // no oracle answered within the failover timeout
            } catch (CompletionException e) {
                if (!BeginContext.retriesOnAnotherOracle(e, client, deadline)) {
                    if (e.getCause() instanceof OracleUnavailableException oue) {
                        throw tooStale(client, oue);
                    }
                    throw BeginContext.unwrapped(e);
                }
            }
        }
        return context.running().track(tx);
    }

    /** A single-row transaction of this client was committed by its region server (the fast path), just now. */
    void fastPathCommitted() {
        fastPathCommittedNanos = System.nanoTime();
    }

    private OracleUnavailableException tooStale(OracleClient last, OracleUnavailableException cause) {
        String age = last == null ? "" : " was last brought up to date "
                + (System.nanoTime() - last.freshAsOfNanos()) / 1_000_000L + " ms ago,";
        return new OracleUnavailableException("cannot begin a read-only transaction: the local replica" + age
                + " staler than " + TransactionManager.READ_ONLY_MAX_STALENESS_MS + " ("
                + context.settings().readOnlyMaxStalenessMillis() + " ms) allows, and refreshing it failed: "
                + cause.getMessage());
    }
}
