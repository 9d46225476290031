package io.sibyl.client.oracle;

import java.util.concurrent.CompletableFuture;

/**
 * Snapshots of read-only transactions taken from one connection's replica, with no round trip to the oracle
 * (docs/architecture.md, "Read-only transactions from the replica").
 *
 * <p>A snapshot {@code S} sees exactly the transactions committed at or below {@code S} (and the fast-path versions
 * below it). It is the highest timestamp in the decisions the replica applied, or the highest start timestamp or
 * ticket answered on the connection ({@link OracleClient#snapshotPoint()}, at least the anchor's) if higher: the
 * oracle decides in timestamp order and its blocks arrive in order before the answers, so every commit at or below
 * {@code S} is already in the replica, and any later commit gets a higher timestamp. Its freshness is {@link OracleClient#freshAsOfNanos()}: every commit acknowledged
 * anywhere before then is in the replica, so in the snapshot.
 *
 * <p>The <em>anchor</em> is an ordinary read-only transaction begun at the oracle on this connection and kept
 * running while snapshots use it. Its start timestamp is at or below every snapshot leased from it, so the oracle's
 * low watermark, and with it the garbage collector, spares every version those snapshots read, and the replica keeps
 * every commit timestamp they need (the anchor counts as a running local reader). A newer anchor is begun in the
 * background when the replica's freshness is half used up or the anchor is older than {@link #ANCHOR_RENEW_NANOS},
 * so the low watermark is held back by about a second, plus the longest read-only transaction; an anchor ends (a
 * one-way finish) once a newer one answered and no snapshot uses it. After {@link #IDLE_NANOS} without a snapshot
 * taken the anchor is let go and the refresher stops, so an idle client sends nothing; its next snapshot waits for
 * one begin.
 *
 * <p>Thread-safe. Every state change happens under {@code this}; the begins complete on the connection's I/O thread.
 */
public final class LocalSnapshots {
    /** An anchor older than this is replaced, so that the low watermark it holds keeps up. */
    static final long ANCHOR_RENEW_NANOS = 1_000_000_000L;
    /** Without a snapshot taken for this long, the anchor is let go and the background refresher stops. */
    static final long IDLE_NANOS = 10_000_000_000L;
    /** The refresher looks at least this often, and at most every millisecond. */
    private static final long MAX_REFRESH_PERIOD_NANOS = 250_000_000L;

    private final OracleClient client;
    /** The newest anchor whose begin was answered; null before the first, and after an idle period. */
    private Anchor current;
    /** The begin of the next anchor, while one is in flight. */
    private CompletableFuture<Anchor> renewal;
    private long lastTakenNanos;
    /** The bound of the last {@link #take}, which the refresher keeps the replica within. */
    private long stalenessNanos = Long.MAX_VALUE;
    private boolean refresherRunning;

    LocalSnapshots(OracleClient client) {
        this.client = client;
    }

    /** A running read-only transaction at the oracle that holds the low watermark for the snapshots leased from it. */
    private static final class Anchor {
        final long startTs;
        /** When its begin was sent: its age at the oracle (transaction.max.age.ms) counts from no later than this. */
        final long sentNanos;
        int users;
        boolean replaced;
        boolean finished;

        Anchor(long startTs, long sentNanos) {
            this.startTs = startTs;
            this.sentNanos = sentNanos;
        }
    }

    /** A snapshot taken: read at {@link #snapshotTs}, then {@link #release} it (once). */
    public final class Lease {
        private final Anchor anchor;
        private final long snapshotTs;
        private boolean released;

        private Lease(Anchor anchor, long snapshotTs) {
            this.anchor = anchor;
            this.snapshotTs = snapshotTs;
        }

        /** The snapshot: transactions committed at or below it are visible, no other. */
        public long snapshotTs() {
            return snapshotTs;
        }

        /**
         * When the anchor's begin was sent ({@link System#nanoTime}): the oracle's transaction.max.age.ms for this
         * snapshot counts from here, since the anchor is what the oracle keeps running for it.
         */
        public long heldSinceNanos() {
            return anchor.sentNanos;
        }

        /** The snapshot is no longer read: the anchor may end once it is replaced. Idempotent. */
        public void release() {
            synchronized (LocalSnapshots.this) {
                if (released) {
                    return;
                }
                released = true;
                anchor.users--;
                finishIfUnused(anchor);
            }
        }
    }

    /**
     * A snapshot whose freshness is within {@code maxStalenessNanos} of now: at once when the replica was brought up to
     * date that recently (the common case on a busy client, whose own requests and the background refresher keep it
     * so), else once a begin sent now has been answered. Fails like that begin if the oracle cannot be reached.
     */
    public CompletableFuture<Lease> take(long maxStalenessNanos) {
        if (maxStalenessNanos <= 0) {
            throw new IllegalArgumentException("maximum staleness must be positive: " + maxStalenessNanos);
        }
        long now = System.nanoTime();
        CompletableFuture<Anchor> waitFor;
        synchronized (this) {
            lastTakenNanos = now;
            stalenessNanos = maxStalenessNanos;
            startRefresher();
            Anchor a = current;
            long staleFor = now - client.freshAsOfNanos();
            if (a != null && staleFor <= maxStalenessNanos) {
                if (staleFor > maxStalenessNanos / 2 || now - a.sentNanos > ANCHOR_RENEW_NANOS) {
                    renew(); // in the background: this snapshot is still fresh enough
                }
                return CompletableFuture.completedFuture(lease(a));
            }
            waitFor = renew();
        }
        return waitFor.thenCompose(a -> {
            synchronized (this) {
                if (current != null && now - client.freshAsOfNanos() <= maxStalenessNanos) {
                    return CompletableFuture.completedFuture(lease(current)); // the newest anchor: never finished
                }
            }
            return take(maxStalenessNanos); // the begin waited for had left too long before this call
        });
    }

    private Lease lease(Anchor a) {
        a.users++;
        // Read after the freshness (the I/O thread sets the point first), so at least as fresh as that.
        long s = Math.max(Math.max(client.replica().highestTimestampApplied(), a.startTs), client.snapshotPoint());
        return new Lease(a, s);
    }

    /** Begins the next anchor unless one is on its way. Called holding {@code this}. */
    private CompletableFuture<Anchor> renew() {
        if (renewal != null && !renewal.isDone()) {
            return renewal;
        }
        long sent = System.nanoTime();
        CompletableFuture<Anchor> next = client.begin().thenApply(ts -> installed(new Anchor(ts, sent)));
        next.whenComplete((a, e) -> {
            synchronized (this) {
                if (renewal == next) {
                    renewal = null;
                }
            }
        });
        if (!next.isDone()) {
            renewal = next;
        }
        return next;
    }

    private Anchor installed(Anchor a) {
        synchronized (this) {
            Anchor old = current;
            current = a;
            if (old != null) {
                old.replaced = true;
                finishIfUnused(old);
            }
            startRefresher(); // if it stopped meanwhile (idle), it lets this anchor go in its turn

        }
        return a;
    }

    /** Called holding {@code this}. */
    private void finishIfUnused(Anchor a) {
        if (a.replaced && a.users == 0 && !a.finished) {
            a.finished = true;
            client.finish(a.startTs);
        }
    }

    /** Called holding {@code this}. */
    private void startRefresher() {
        if (!refresherRunning) {
            refresherRunning = client.schedule(this::refresh, refreshPeriod());
        }
    }

    private long refreshPeriod() {
        return Math.max(1_000_000L, Math.min(MAX_REFRESH_PERIOD_NANOS, stalenessNanos / 4));
    }

    /** On the I/O thread: keeps the replica fresh and the anchor young while snapshots are taken, else lets go. */
    private void refresh() {
        synchronized (this) {
            long now = System.nanoTime();
            if (now - lastTakenNanos > IDLE_NANOS) {
                refresherRunning = false;
                if (current != null) {
                    current.replaced = true;
                    finishIfUnused(current);
                    current = null;
                }
                return;
            }
            Anchor a = current;
            if (now - client.freshAsOfNanos() > stalenessNanos / 2 || a == null
                    || now - a.sentNanos > ANCHOR_RENEW_NANOS) {
                renew();
            }
            refresherRunning = client.schedule(this::refresh, refreshPeriod());
        }
    }
}
