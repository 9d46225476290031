package io.sibyl.bench.fuzz;

import io.sibyl.protocol.Wire;

import java.util.List;

/**
 * The rules every answer to an attacker must follow (docs/protocol.md): a connection the oracle drops gets a
 * connection-level ERROR saying why first; a connection it keeps gets errors only for single requests, each with a
 * text. Counts the errors and reports each breach to the {@link FuzzCounters}.
 */
final class Verdicts {
    /** Shortest text an ERROR may have and still say what to fix. */
    private static final int MIN_ERROR_TEXT = 10;

    private final FuzzCounters counters;

    Verdicts(FuzzCounters counters) {
        this.counters = counters;
    }

    /** The oracle must have refused the connection with {@code code} (any code if -1) and closed it. */
    void refused(RawConnection c, List<OracleMessage> seen, int code, String what) {
        count(c, seen);
        if (!c.closedByOracle()) {
            counters.misbehaved(what + ": the connection was not closed; read " + seen);
            return;
        }
        counters.closedByOracle.increment();
        OracleMessage last = seen.isEmpty() ? null : seen.get(seen.size() - 1);
        if (last == null || !last.isConnectionError()) {
            counters.misbehaved(what + ": closed without a connection-level ERROR; read " + seen);
        } else if (code >= 0 && last.code() != code) {
            counters.misbehaved(what + ": expected ERROR code " + code + ", got " + last);
        } else if (last.text() == null || last.text().length() < MIN_ERROR_TEXT) {
            counters.misbehaved(what + ": an ERROR that explains nothing: " + last);
        }
    }

    /**
     * The oracle must have kept the connection and answered every request it refused with a request-level ERROR. The
     * attacker's requests of hostile frames are numbered from 1, so an ERROR with id 0 there speaks of the connection.
     */
    void keptOpen(RawConnection c, List<OracleMessage> seen, String what) {
        keptOpen(c, seen, what, false);
    }

    /**
     * Mutated or random bytes: the oracle may take them or refuse the connection, by the rules of each. Their request
     * ids are random too, and the oracle answers a request numbered 0 with an ERROR of id 0 that does not close the
     * connection: counted apart, not a breach (protocol.md leaves id 0 to errors that close; issue 19, item 7).
     */
    void refusedOrKept(RawConnection c, List<OracleMessage> seen, String what) {
        if (c.closedByOracle()) {
            refused(c, seen, -1, what);
        } else {
            keptOpen(c, seen, what, true);
        }
    }

    private void keptOpen(RawConnection c, List<OracleMessage> seen, String what, boolean idsMayBeZero) {
        if (c.closedByOracle()) {
            refused(c, seen, -1, what);
            counters.misbehaved(what + ": the oracle closed a connection that sent only well-formed requests");
            return;
        }
        count(c, seen);
        for (OracleMessage m : seen) {
            if (m.type() != Wire.ERROR) {
                continue;
            }
            if (m.text() == null || m.text().length() < MIN_ERROR_TEXT) {
                counters.misbehaved(what + ": an ERROR that explains nothing: " + m);
            } else if (m.id() == 0 && idsMayBeZero) {
                counters.requestErrorsForIdZero.increment();
            } else if (m.id() == 0) {
                counters.misbehaved(what + ": " + m + " on a connection the oracle kept");
            }
        }
    }

    private void count(RawConnection c, List<OracleMessage> seen) {
        for (OracleMessage m : seen) {
            if (m.type() == Wire.ERROR) {
                counters.errorReceived(m.code(), m.id() == 0 && c.closedByOracle());
            }
        }
    }
}
