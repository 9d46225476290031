package io.sibyl.bench;

import io.netty.channel.EventLoopGroup;
import io.sibyl.client.oracle.OracleClient;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The closed loop: {@code window} slots spread round-robin over the connections, each slot on its connection's I/O
 * thread. Holds what the slots share: the write-set builder, the pacer, the metrics and the stop flag.
 */
final class LoadDriver {
    private final Slot[] slots;
    private final WriteSets writeSets;
    /** Null under SI: the commit then carries the writes only ({@code COMMIT}). */
    private final CertifiedReads certifiedReads;
    private final Pacer pacer;
    private final Metrics metrics = new Metrics();
    private final double readOnlyFraction;
    private final Set<OracleClient> lost = ConcurrentHashMap.newKeySet();
    private final Map<EventLoopGroup, PacingTicker> tickers = new ConcurrentHashMap<>();
    private volatile boolean stopping;

    /** @param loops {@code loops[i]} is the (single-threaded) group connection {@code i} was opened on */
    LoadDriver(BenchOptions o, OracleClient[] clients, EventLoopGroup[] loops) {
        this.writeSets = new WriteSets(KeyChooser.of(o), WriteSetSizes.of(o));
        this.certifiedReads = o.isolation == BenchOptions.Isolation.SI ? null : CertifiedReads.of(o);
        this.pacer = new Pacer(o.rate);
        this.readOnlyFraction = o.readOnlyFraction;
        this.slots = new Slot[o.window];
        for (int i = 0; i < slots.length; i++) {
            int c = i % clients.length;
            slots[i] = new Slot(clients[c], loops[c], this);
        }
    }

    void start() {
        pacer.start(System.nanoTime());
        for (Slot s : slots) {
            s.launch();
        }
    }

    /** Slots stop at their next transaction boundary. */
    void stop() {
        stopping = true;
    }

    boolean stopping() {
        return stopping;
    }

    Metrics metrics() {
        return metrics;
    }

    Pacer pacer() {
        return pacer;
    }

    /** The ticker that releases paced transactions on {@code loop} (one per I/O thread, made on first use). */
    PacingTicker ticker(EventLoopGroup loop) {
        return tickers.computeIfAbsent(loop, l -> new PacingTicker(l, this::stopping));
    }

    WriteSets writeSets() {
        return writeSets;
    }

    /** The reads a transaction certifies and the granules it records, or null under SI. */
    CertifiedReads certifiedReads() {
        return certifiedReads;
    }

    double readOnlyFraction() {
        return readOnlyFraction;
    }

    void connectionLost(OracleClient client) {
        if (lost.add(client) && !stopping) {
            System.err.println("so-bench: lost the connection to the oracle at " + client.address() + " ("
                    + metrics.firstError() + "); its slots stopped");
        }
    }

    int lostConnections() {
        return lost.size();
    }
}
