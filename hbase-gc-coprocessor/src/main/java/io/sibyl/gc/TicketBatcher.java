package io.sibyl.gc;

import io.sibyl.client.oracle.OracleClient;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Group commit for fast-path tickets: while one TICKET is on its way to the oracle, the writes of the region server
 * that ask for one wait and then go together in the next, so a busy server pays one round trip, and one wake-up of
 * the oracle, per group rather than per write. Writes of one group share the ticket, and so their version; they are of
 * different rows (a row's writes are serialised by its lock), so no snapshot can tell them apart.
 */
final class TicketBatcher {
    /** Rows in one TICKET at most, well below the oracle's max.write.set.rows (10,000 by default). */
    static final int MAX_ROWS_PER_TICKET = 512;

    /** How the batcher reaches the oracle: the open client, waiting for a connection under way if it may. */
    interface Clients {
        OracleClient open(boolean mayWait) throws Exception;
    }

    private record Waiting(long[] rowIds, long[] granules, CompletableFuture<OracleLink.Ticket> done) {
    }

    private final Clients clients;
    private final Object lock = new Object();
    private List<Waiting> waiting = new ArrayList<>(); // guarded by lock
    private boolean inFlight; // guarded by lock

    TicketBatcher(Clients clients) {
        this.clients = clients;
    }

    /** A ticket for {@code rowIds} (and their {@code granules}), alone or with the writes that wait beside it. */
    CompletableFuture<OracleLink.Ticket> ticket(long[] rowIds, long[] granules) {
        Waiting w = new Waiting(rowIds, granules, new CompletableFuture<>());
        synchronized (lock) {
            waiting.add(w);
            if (inFlight) {
                return w.done();
            }
            inFlight = true;
        }
        sendWaiting(true); // on the writer's thread, which may wait for a connection
        return w.done();
    }

    /** Sends what waits as one TICKET, or ends the run when nothing does; continues when its answer comes. */
    private void sendWaiting(boolean mayWait) {
        List<Waiting> group;
        synchronized (lock) {
            if (waiting.isEmpty()) {
                inFlight = false;
                return;
            }
            group = take();
        }
        OracleClient client;
        try {
            client = clients.open(mayWait);
            if (client == null) {
                throw new IOException("no connection to the status oracle");
            }
        } catch (Exception e) {
            group.forEach(w -> w.done().completeExceptionally(e));
            sendWaiting(mayWait);
            return;
        }
        Set<Long> rows = new LinkedHashSet<>();
        Set<Long> granules = new LinkedHashSet<>();
        for (Waiting w : group) {
            for (long r : w.rowIds()) {
                rows.add(r);
            }
            for (long g : w.granules()) {
                granules.add(g);
            }
        }
        client.ticket(toArray(rows), toArray(granules)).whenComplete((t, e) -> {
            OracleLink.Ticket ticket = e == null ? new OracleLink.Ticket(t, client.replica()) : null;
            for (Waiting w : group) {
                if (ticket != null) {
                    w.done().complete(ticket);
                } else {
                    w.done().completeExceptionally(e);
                }
            }
            sendWaiting(false); // on the connection's I/O thread: never wait there
        });
    }

    /** Takes up to {@link #MAX_ROWS_PER_TICKET} rows' worth of waiting writes, in order. Holding {@code lock}. */
    private List<Waiting> take() {
        List<Waiting> group = new ArrayList<>();
        int rows = 0;
        int i = 0;
        while (i < waiting.size() && (group.isEmpty() || rows + waiting.get(i).rowIds().length
                <= MAX_ROWS_PER_TICKET)) {
            Waiting w = waiting.get(i++);
            rows += w.rowIds().length;
            group.add(w);
        }
        waiting = new ArrayList<>(waiting.subList(i, waiting.size()));
        return group;
    }

    private static long[] toArray(Set<Long> values) {
        long[] out = new long[values.size()];
        int i = 0;
        for (long v : values) {
            out[i++] = v;
        }
        return out;
    }
}
