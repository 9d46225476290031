package io.sibyl.oracle.journal;

import io.sibyl.protocol.ProtocolException;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.LedgerEntry;
import org.apache.bookkeeper.client.LedgerHandle;

import java.io.IOException;
import java.util.Enumeration;

/** Reads a range of one journal ledger's entries into a {@link JournalReplay} (recovery and the standby's tail). */
final class LedgerReading {
    private static final int READ_BATCH = 1024;

    private LedgerReading() {
    }

    /** BookKeeper could not read the entries (the data is not known to be bad: reading again may work). */
    static final class ReadFailedException extends IOException {
        ReadFailedException(String message, BKException cause) {
            super(message, cause);
        }
    }

    /** Replays entries {@code first..last} (inclusive; nothing if {@code last < first}) of {@code lh}. */
    static void replay(LedgerHandle lh, long first, long last, JournalReplay replay)
            throws IOException, InterruptedException {
        try {
            for (long from = first; from <= last; from += READ_BATCH) {
                long to = Math.min(last, from + READ_BATCH - 1);
                Enumeration<LedgerEntry> entries = lh.readEntries(from, to);
                while (entries.hasMoreElements()) {
                    LedgerEntry entry = entries.nextElement();
                    try {
                        replay.entry(entry.getEntry());
                    } catch (ProtocolException e) {
                        throw new IOException("journal ledger " + lh.getId() + " entry " + entry.getEntryId()
                                + " is not a sequence of decision blocks: " + e.getMessage(), e);
                    }
                }
            }
        } catch (BKException e) {
            throw new ReadFailedException("reading journal ledger " + lh.getId() + " entries " + first + ".." + last
                    + ": " + e.getMessage(), e);
        }
    }
}
