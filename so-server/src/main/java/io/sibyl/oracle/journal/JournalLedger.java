package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.LedgerHandle;

/** A ledger the journal writes or wrote, with what was sent to it; guarded by the journal lock. */
final class JournalLedger {
    final LedgerHandle handle;
    final int ensemble;
    long bytesSent;
    long entriesSent;
    /** Adds sent to this ledger and not yet answered. */
    int outstanding;
    /** A write to it failed: abandoned, never written again. */
    boolean broken;
    /** Rolled over from: closed once its outstanding adds are answered. */
    boolean retired;
    boolean closeRequested;

    JournalLedger(LedgerHandle handle, int ensemble) {
        this.handle = handle;
        this.ensemble = ensemble;
    }

    long id() {
        return handle.getId();
    }

    /** For log lines and the rollover reason. */
    String fill() {
        return entriesSent + " entries / " + bytesSent + " bytes";
    }
}
