package io.sibyl.client;

import io.sibyl.protocol.HostedRangeSweep;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The leading oracle's background sweep of aborted ranges ({@link HostedRangeSweep}, found by the oracle through
 * {@link java.util.ServiceLoader}): whenever the oracle holds a range, it runs {@link AbortSweeper#sweepRanges} over
 * it, so that a failover's range is deleted and forgotten without anyone running {@code bin/sibyl-sweep}. The rules
 * that make a sweep safe beside running writers (the low watermark past the range's end, the settle time) and the
 * judgement of which versions go are {@link AbortSweeper}'s own; this class only decides when to run it.
 */
public final class LeaderRangeSweep implements HostedRangeSweep {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderRangeSweep.class);

    @Override
    public AutoCloseable start(Settings settings, Progress progress) {
        Configuration conf = HBaseConfiguration.create();
        conf.addResource(hbaseSite(settings.hbaseSite()));
        // The sweep talks to the oracle that hosts it, never to another found through ZooKeeper: it runs only while
        // that oracle leads, and stops with it.
        conf.unset(TransactionManager.ORACLE_ZK_CONNECT);
        conf.unset(TransactionManager.ORACLE_ADDRESS);
        conf.set(TransactionManager.ADMIN_SECRET_FILE, settings.adminSecretFile());
        Runner runner = new Runner(conf, settings, progress);
        runner.thread.start();
        return runner;
    }

    /** The HBase settings file: the one named, else {@code $HBASE_CONF_DIR/hbase-site.xml}. */
    private static org.apache.hadoop.fs.Path hbaseSite(String named) {
        File file;
        if (!named.isEmpty()) {
            file = new File(named);
        } else if (System.getenv("HBASE_CONF_DIR") != null) {
            file = new File(System.getenv("HBASE_CONF_DIR"), "hbase-site.xml");
        } else {
            throw new IllegalArgumentException("range.sweep.tables is set, but no HBase cluster is named: set"
                    + " range.sweep.hbase.site to the cluster's hbase-site.xml, or HBASE_CONF_DIR to its directory");
        }
        if (!file.canRead()) {
            throw new IllegalArgumentException("range.sweep.hbase.site: cannot read " + file.getAbsolutePath()
                    + " (the HBase cluster's hbase-site.xml, naming hbase.zookeeper.quorum)");
        }
        return new org.apache.hadoop.fs.Path(file.toURI());
    }

    /** The sweep's thread: look every interval, sweep when a range waits, report the phase. */
    private static final class Runner implements AutoCloseable, Runnable {
        private final Configuration conf;
        private final Settings settings;
        private final Progress progress;
        private final Set<TableName> tables;
        private final Set<TableName> excluded;
        private final Thread thread;
        private volatile boolean closed;
        private TransactionManager manager; // sweep thread only
        private HostedRangeSweep.Phase reported;
        /** The last failure logged at WARN, so that one cause repeating every interval is logged once. */
        private String lastFailure;

        Runner(Configuration conf, Settings settings, Progress progress) {
            this.conf = conf;
            this.settings = settings;
            this.progress = progress;
            this.tables = settings.tables().stream().map(TableName::valueOf).collect(Collectors.toSet());
            this.excluded = settings.excluded().stream().map(TableName::valueOf).collect(Collectors.toSet());
            this.thread = new Thread(this, "sibyl-range-sweep");
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            LOG.info("sweeping aborted ranges in the background: tables {}{}, settle {} ms, looking every {} ms",
                    tables.isEmpty() ? "all that can hold transactional data" : tables,
                    excluded.isEmpty() ? "" : " except " + excluded, settings.settleMillis(),
                    settings.intervalMillis());
            while (!closed) {
                try {
                    sweepOnce();
                    Thread.sleep(settings.intervalMillis());
                } catch (InterruptedException e) {
                    break;
                }
            }
            closeManager();
        }

        private void sweepOnce() throws InterruptedException {
            int waiting = -1;
            try {
                if (manager == null) {
                    manager = TransactionManager.create(conf, settings.oracleHost(), settings.oraclePort());
                }
                waiting = manager.oracle().replica().abortedRanges().size();
                if (waiting == 0) {
                    phase(HostedRangeSweep.Phase.IDLE, 0);
                    return;
                }
                AbortSweeper.Report r = new AbortSweeper(manager, tables, excluded, settings.settleMillis(), false)
                        .sweepRanges(this::phase);
                lastFailure = null; // it ran: the next failure is news
                if (r.abortedRanges() == 0) {
                    // None below the low watermark yet: a recovered oracle holds it down for reader.grace.ms.
                    phase(HostedRangeSweep.Phase.WAITING_FOR_WATERMARK, waiting);
                } else {
                    progress.swept(r.abortedRanges(), r.versionsDeleted());
                    LOG.info("aborted range sweep: {} ranges reported cleaned up, {} versions deleted in {}",
                            r.abortedRanges(), r.versionsDeleted(), r.tablesScanned());
                    phase(HostedRangeSweep.Phase.IDLE, waiting - r.abortedRanges());
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                if (closed) {
                    return;
                }
                phase(HostedRangeSweep.Phase.FAILED, Math.max(waiting, 0));
                String why = e.toString();
                if (!why.equals(lastFailure)) {
                    LOG.warn("aborted range sweep failed, trying again every {} ms: {}", settings.intervalMillis(),
                            why);
                } else {
                    // The same cause again (a table named that does not exist): said once, counted every time.
                    LOG.debug("aborted range sweep failed again: {}", why);
                }
                lastFailure = why;
                closeManager(); // the next attempt connects afresh
            }
        }

        private void phase(HostedRangeSweep.Phase phase, int ranges) {
            if (phase != reported) {
                LOG.info("aborted range sweep: {} ({} ranges waiting)", phase.name().toLowerCase(java.util.Locale.ROOT)
                        .replace('_', ' '), ranges);
                reported = phase;
            }
            progress.phase(phase, ranges);
        }

        private void closeManager() {
            if (manager != null) {
                try {
                    manager.close();
                } catch (RuntimeException e) {
                    LOG.debug("closing the range sweep's connections: {}", e.toString());
                }
                manager = null;
            }
        }

        @Override
        public void close() throws InterruptedException {
            closed = true;
            thread.interrupt();
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }
    }
}
