package io.sibyl.gc;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CoprocessorEnvironment;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.coprocessor.ObserverContext;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.apache.hadoop.hbase.coprocessor.RegionObserver;
import org.apache.hadoop.hbase.metrics.Counter;
import org.apache.hadoop.hbase.metrics.MetricRegistry;
import org.apache.hadoop.hbase.regionserver.FlushLifeCycleTracker;
import org.apache.hadoop.hbase.regionserver.InternalScanner;
import org.apache.hadoop.hbase.regionserver.Region;
import org.apache.hadoop.hbase.regionserver.ScanType;
import org.apache.hadoop.hbase.regionserver.Store;
import org.apache.hadoop.hbase.regionserver.compactions.CompactionLifeCycleTracker;
import org.apache.hadoop.hbase.regionserver.compactions.CompactionRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Optional;

/**
 * Region observer that garbage-collects a Sibyl table at flush and compaction time: versions of aborted transactions
 * and versions no snapshot can read any more are left out of the new file (docs/gc.md). Load it on the tables the
 * transactional client uses; without a reachable oracle it removes nothing.
 */
public final class SibylGcCoprocessor implements RegionCoprocessor, RegionObserver {
    private static final Logger LOG = LoggerFactory.getLogger(SibylGcCoprocessor.class);
    /**
     * HBase counter, cells: versions the collector kept in the files flushes and compactions wrote, in the region
     * server's registry for this coprocessor (summed over its regions; docs/operations.md, Metrics).
     */
    static final String CELLS_KEPT = "sibylGcCellsKept";
    /** HBase counter, cells: versions it left out (aborted writers', shadowed below the low watermark, deleted). */
    static final String CELLS_REMOVED = "sibylGcCellsRemoved";

    private volatile OracleLink link;
    private volatile Region region;
    /** Adds a finished scan's counts to the region server's metrics; counts nothing until {@link #start}. */
    private volatile GcScanner.Tally tally = (kept, removed) -> { };

    @Override
    public Optional<RegionObserver> getRegionObserver() {
        return Optional.of(this);
    }

    @Override
    public void start(CoprocessorEnvironment env) {
        RegionCoprocessorEnvironment regionEnv = CoprocessorStart.userRegion(env);
        if (regionEnv == null) {
            return;
        }
        region = regionEnv.getRegion();
        tally = countInto(regionEnv);
        CoprocessorStart.configure(regionEnv, SibylGcCoprocessor.class, LOG, "garbage collection is off for {}: {}",
                configured -> {
                    if (configured.settings().enabled()) {
                        link = configured.acquireLink();
                    }
                });
    }

    /**
     * The region server's counters for this coprocessor (one registry, shared by its regions and reference-counted
     * by HBase); counts nothing, with a warning, if this HBase cannot give them: metrics must not stop collection.
     */
    private static GcScanner.Tally countInto(RegionCoprocessorEnvironment env) {
        try {
            MetricRegistry registry = env.getMetricRegistryForRegionServer();
            Counter kept = registry.counter(CELLS_KEPT);
            Counter removed = registry.counter(CELLS_REMOVED);
            return (k, r) -> {
                kept.increment(k);
                removed.increment(r);
            };
        } catch (RuntimeException | LinkageError e) {
            LOG.warn("garbage collection counts no metrics for {}: {}", env.getRegionInfo().getEncodedName(),
                    e.toString());
            return (k, r) -> { };
        }
    }

    @Override
    public void stop(CoprocessorEnvironment env) {
        if (link != null) {
            link.release();
            link = null;
        }
    }

    @Override
    public InternalScanner preFlush(ObserverContext<RegionCoprocessorEnvironment> ctx, Store store,
                                    InternalScanner scanner, FlushLifeCycleTracker tracker) {
        return collecting(scanner, store, false, "flush");
    }

    @Override
    public InternalScanner preCompact(ObserverContext<RegionCoprocessorEnvironment> ctx, Store store,
                                      InternalScanner scanner, ScanType scanType, CompactionLifeCycleTracker tracker,
                                      CompactionRequest request) {
        boolean allFiles = request.isAllFiles() && scanType == ScanType.COMPACT_DROP_DELETES;
        return collecting(scanner, store, allFiles, allFiles ? "major compaction" : "minor compaction");
    }

    private InternalScanner collecting(InternalScanner scanner, Store store, boolean allFiles, String kind) {
        OracleLink l = link;
        if (l == null || !mayHoldTransactionalData(store.getColumnFamilyDescriptor())) {
            return scanner;
        }
        String what = kind + " of " + region.getRegionInfo().getEncodedName() + "/" + store.getColumnFamilyName();
        GcHorizon horizon = l.horizon(what);
        return horizon == null ? scanner : new GcScanner(scanner, horizon, this::isLive, allFiles, what, tally);
    }

    /**
     * TTable refuses a family keeping one version or with a TTL, so no transaction wrote there: its cells are plain
     * HBase data, whose timestamps (explicit ones, or wall-clock ones once the oracle's clock passed them) the
     * collector would read as writers committed long ago or aborted, removing versions the family's own rules
     * (MIN_VERSIONS, VERSIONS) keep.
     */
    static boolean mayHoldTransactionalData(ColumnFamilyDescriptor family) {
        return family.getMaxVersions() >= 2 && family.getTimeToLive() == HConstants.FOREVER;
    }

    /** Asks the region itself, so delete markers in every file and in the memstore count. */
    private boolean isLive(Cell version) {
        try {
            Get get = new Get(CellUtil.cloneRow(version))
                    .addColumn(CellUtil.cloneFamily(version), CellUtil.cloneQualifier(version))
                    .setTimestamp(version.getTimestamp());
            return !region.get(get).isEmpty();
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot check version {} of {}: kept", version, region.getRegionInfo().getEncodedName(), e);
            return false;
        }
    }
}
