package io.sibyl.bench.fuzz;

import io.sibyl.protocol.ProtocolException;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Random;

/** One attacking thread: connection after connection, each an attack drawn at random, until the run has its frames. */
final class Attacker implements Runnable {
    private final Random rnd;
    private final HandshakeAttacks first;
    private final SessionAttacks sessions;
    private final FuzzCounters counters;
    private final long frameTarget;

    Attacker(Random rnd, HandshakeAttacks first, SessionAttacks sessions, FuzzCounters counters, long frameTarget) {
        this.rnd = rnd;
        this.first = first;
        this.sessions = sessions;
        this.counters = counters;
        this.frameTarget = frameTarget;
    }

    @Override
    public void run() {
        while (counters.frames() < frameTarget && !Thread.currentThread().isInterrupted()) {
            try {
                attackOnce();
            } catch (SocketTimeoutException e) {
                counters.misbehaved("the oracle neither answered nor closed within "
                        + RawConnection.READ_TIMEOUT_MILLIS + " ms: " + e.getMessage());
            } catch (ProtocolException e) {
                counters.misbehaved("the oracle sent something protocol version 6 does not allow: " + e.getMessage());
            } catch (IOException e) {
                counters.misbehaved("connection failed without an ERROR (is the oracle alive?): " + e);
                sleepQuietly(); // a dead oracle would otherwise be retried in a tight loop
            }
        }
    }

    private void attackOnce() throws IOException {
        int pick = rnd.nextInt(100);
        if (pick < 45) {
            sessions.session(rnd);
        } else if (pick < 60) {
            first.badHandshake(rnd);
        } else if (pick < 72) {
            first.tls(rnd);
        } else if (pick < 84) {
            first.randomFirstBytes(rnd);
        } else if (pick < 94) {
            first.oversizedFirst(rnd);
        } else {
            first.halfHandshake(rnd);
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
