package io.sibyl.bench.fuzz;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/** What the attackers sent and got back, shared by all their threads. */
final class FuzzCounters {
    /** Problems kept with their text; the rest are only counted. */
    private static final int KEPT_PROBLEMS = 20;

    private final LongAdder[] framesByKind = adders(FrameKind.values().length);
    private final AtomicLong frames = new AtomicLong();
    /** Requests in hostile frames, by message type (1-9). */
    private final LongAdder[] requestsByType = adders(16);
    private final LongAdder[] connectionErrorsByCode = adders(16);
    private final LongAdder[] requestErrorsByCode = adders(16);
    final LongAdder connectionsOpened = new LongAdder();
    final LongAdder closedByOracle = new LongAdder();
    /** Connections the attacker dropped in the middle of a frame (or a handshake). */
    final LongAdder droppedMidFrame = new LongAdder();
    /** Request-level ERRORs for requests that mutated or random bytes numbered 0 (see {@link Verdicts}). */
    final LongAdder requestErrorsForIdZero = new LongAdder();
    private final AtomicLong misbehaviours = new AtomicLong();
    private final ConcurrentLinkedQueue<String> misbehaviourTexts = new ConcurrentLinkedQueue<>();
    /** The first ERROR text a TLS ClientHello got, to show what a TLS client is told. */
    final AtomicReference<String> tlsAnswer = new AtomicReference<>();

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** Counts a frame sent; returns the number sent so far by all attackers. */
    long frameSent(FrameKind kind) {
        framesByKind[kind.ordinal()].increment();
        return frames.incrementAndGet();
    }

    long frames() {
        return frames.get();
    }

    long frames(FrameKind kind) {
        return framesByKind[kind.ordinal()].sum();
    }

    void requestSent(byte type) {
        requestsByType[type & 15].increment();
    }

    long requests(byte type) {
        return requestsByType[type & 15].sum();
    }

    /** Counts an ERROR: one that closed the connection, or one for a single request. */
    void errorReceived(byte code, boolean closedTheConnection) {
        (closedTheConnection ? connectionErrorsByCode : requestErrorsByCode)[code & 15].increment();
    }

    long connectionErrors(int code) {
        return connectionErrorsByCode[code & 15].sum();
    }

    long requestErrors(int code) {
        return requestErrorsByCode[code & 15].sum();
    }

    /** The oracle did something the protocol does not allow (see docs/protocol.md); the run fails. */
    void misbehaved(String what) {
        if (misbehaviours.incrementAndGet() <= KEPT_PROBLEMS) {
            misbehaviourTexts.add(what);
        }
    }

    long misbehaviours() {
        return misbehaviours.get();
    }

    List<String> misbehaviourTexts() {
        return new ArrayList<>(misbehaviourTexts);
    }
}
