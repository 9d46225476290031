package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.zookeeper.ZooKeeper;

import java.io.IOException;

/**
 * Starting an oracle on the BookKeeper journal in one call: connect to ZooKeeper and BookKeeper, take the journal
 * over and recover ({@link JournalRecovery}), then open a journal that continues it. The returned journal owns both
 * clients and closes them in {@link BookKeeperJournal#close()}.
 *
 * <pre>{@code
 * JournalSettings js = JournalSettings.fromProperties(props);
 * JournalBootstrap.Started started = JournalBootstrap.recoverAndOpen(js, JournalClients.ownerName(), listener,
 *         config.readerGraceMillis());
 * RecoveredState r = started.recovered();
 * OracleServer server = OracleServer.start(config, started.journal(), r.newOracleState(config));
 * }</pre>
 * (the listener should end in {@code server.fatalError}; see {@code OracleServerMain}).
 */
public final class JournalBootstrap {
    private JournalBootstrap() {
    }

    /** The recovered state and the journal that continues it. */
    public record Started(RecoveredState recovered, BookKeeperJournal journal) {
    }

    public static Started recoverAndOpen(JournalSettings settings, String owner, FatalErrorListener listener)
            throws IOException, InterruptedException {
        return recoverAndOpen(settings, owner, listener, 0);
    }

    /**
     * As {@link #recoverAndOpen(JournalSettings, String, FatalErrorListener)}, recording the oracle's
     * {@code reader.grace.ms} in the ledgers it writes (see {@link RecoveredState#writerGraceMillis()}).
     */
    public static Started recoverAndOpen(JournalSettings settings, String owner, FatalErrorListener listener,
                                         long readerGraceMillis) throws IOException, InterruptedException {
        ZooKeeper zk = JournalClients.connectZooKeeper(settings);
        BookKeeper bk = null;
        try {
            bk = JournalClients.newBookKeeper(settings);
            LedgerRegistry registry = new LedgerRegistry(zk, settings.ledgersZnode(), ZnodeAcl.of(settings));
            RecoveredState recovered = JournalRecovery.recover(bk, registry, settings, owner);
            BookKeeperJournal journal = BookKeeperJournal.open(bk, registry, recovered.registry(), settings,
                    listener, readerGraceMillis, recovered.writerGraceMillis());
            journal.closeAfterwards(bk::close, zk::close);
            return new Started(recovered, journal);
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (bk != null) {
                try {
                    bk.close();
                } catch (Exception ignored) {
                    // best effort
                }
            }
            zk.close();
            throw e;
        }
    }
}
