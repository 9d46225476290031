package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.HostedRangeSweep;
import io.sibyl.protocol.Timestamps;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.filter.TimestampsFilter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

/**
 * Cleans up after clients that died in the middle of a transaction: finds the versions their aborted transactions
 * left in HBase, deletes them (exact-version delete markers, as a live client does after an abort), and reports each
 * transaction cleaned up, so that the status oracle can forget it. Without it the oracle's aborted set keeps every
 * transaction of a killed client for good. It does the same for the {@link AbortedRange}s of oracle recoveries (the
 * transactions that were running at a crash): their versions are deleted, all but those of the range's commits, and
 * the range is reported, so that the oracle forgets it too instead of keeping it until
 * {@link AbortedRange#MAX_KEPT} later recoveries push it out. See docs/gc.md, "Aborted transactions of dead clients".
 *
 * <p>Safe to run at any time, also while transactions run: it only touches transactions that are aborted and that
 * started below the oracle's low watermark, so none of them runs anywhere or can write again, and it takes only
 * those seen so twice, {@code settle} apart (a write a region server took from a dead client and applies late lands in
 * between). It scans the
 * tables named, or every user table with a family that can hold transactional data
 * ({@link TableFamilies#mayHoldTransactionalData}),
 * except the ones {@code excluded}. Every table this oracle's transactions write to must be scanned, since the
 * versions of a forgotten transaction in a table not scanned would read as committed; and no table of another
 * oracle may be, since its versions carry that oracle's timestamps.
 */
public final class AbortSweeper {
    private static final Logger LOG = LoggerFactory.getLogger(AbortSweeper.class);
    /** Timestamps per TimestampsFilter: each scan of a table looks for at most this many transactions. */
    private static final int TIMESTAMPS_PER_SCAN = 10_000;
    private static final int DELETES_PER_BATCH = 1_000;
    private static final long ORACLE_TIMEOUT_SECONDS = 30;
    /** Below the smallest idle.timeout.ms an oracle accepts (1 s): the settle keeps its connection busy. */
    private static final long KEEP_ALIVE_MS = 500;

    /** What one sweep found and did. */
    public record Report(List<TableName> tablesScanned, Map<TableName, String> tablesSkipped, int transactions,
                         int abortedRanges, long versionsFound, long versionsDeleted, int reportedCleanedUp,
                         boolean dryRun) {
    }

    /** What is to be swept: aborted transactions and aborted ranges, all below the low watermark. */
    private record Candidates(long[] transactions, List<AbortedRange> ranges) {
        boolean isEmpty() {
            return transactions.length == 0 && ranges.isEmpty();
        }

        /** Those also among {@code now} (ranges by interval, taken from {@code now}). */
        Candidates both(Candidates now) {
            long[] ts = Arrays.stream(transactions).filter(t -> Arrays.binarySearch(now.transactions, t) >= 0)
                    .toArray();
            List<AbortedRange> rs = now.ranges.stream()
                    .filter(r -> ranges.stream().anyMatch(earlier -> earlier.sameInterval(r))).toList();
            return new Candidates(ts, rs);
        }
    }

    private final TransactionManager manager;
    private final Set<TableName> only;
    private final Set<TableName> excluded;
    private final long settleMillis;
    private final boolean dryRun;

    /**
     * @param manager      its HBase connection and oracle connection are used (it is not closed)
     * @param only         the tables to scan, if not empty; empty: every user table that can hold transactional
     *                     data. Name them when other Sibyl deployments (other oracles) keep tables in the same HBase
     *                     cluster: their versions carry timestamps of their own oracle, which can equal this one's
     * @param excluded     tables not to scan: only tables no transaction of this oracle writes to
     * @param settleMillis how long a transaction must stay a candidate before it is swept, so that no write a region
     *                     server took from a dead client is still to be applied (clients stop HBase's retries of their
     *                     writes by the end of their read window, before a transaction becomes a candidate; see
     *                     {@code AbortSweeperMain.DEFAULT_SETTLE_MS} and docs/gc.md)
     * @param dryRun       find and count only: delete nothing, report nothing
     */
    public AbortSweeper(TransactionManager manager, Set<TableName> only, Set<TableName> excluded, long settleMillis,
                        boolean dryRun) {
        if (settleMillis < 0) {
            throw new IllegalArgumentException("settle time must be >= 0 ms, got " + settleMillis);
        }
        this.manager = manager;
        this.only = Set.copyOf(only);
        this.excluded = Set.copyOf(excluded);
        this.settleMillis = settleMillis;
        this.dryRun = dryRun;
    }

    /** One sweep: candidates, settle, candidates again, then scan, delete and report those seen both times. */
    public Report sweep() throws IOException, InterruptedException {
        return sweep(false, (phase, ranges) -> { });
    }

    /**
     * One sweep of the aborted ranges alone, as {@link #sweep()} takes them (the leader's background sweep:
     * dead clients' transactions are left to {@code bin/sibyl-sweep}, whose full scans a cron job schedules), telling
     * {@code phases} when it starts to settle and to scan.
     */
    public Report sweepRanges(BiConsumer<HostedRangeSweep.Phase, Integer> phases)
            throws IOException, InterruptedException {
        return sweep(true, phases);
    }

    private Report sweep(boolean rangesOnly, BiConsumer<HostedRangeSweep.Phase, Integer> phases)
            throws IOException, InterruptedException {
        OracleClient oracle = manager.oracle();
        if (!dryRun && !oracle.isAdmin()) {
            // Checked before anything is deleted: without the admin role the oracle refuses every report.
            throw new IllegalStateException("the sweep reports other clients' transactions cleaned up, which needs"
                    + " the oracle's admin role: set " + TransactionManager.ADMIN_SECRET_FILE + " to a file holding"
                    + " the oracle's admin secret (its admin.secret.file; docs/operations.md, Security), or connect"
                    + " with a client certificate (sibyl.client.tls.key.store) the oracle's admin.identities names, or"
                    + " use --dry-run");
        }
        Candidates candidates = candidates(oracle, rangesOnly);
        if (settleMillis > 0 && !candidates.isEmpty()) {
            phases.accept(HostedRangeSweep.Phase.SETTLING, candidates.ranges.size());
            LOG.info("{} aborted transactions and {} aborted ranges below the low watermark; sweeping those still so"
                    + " after {} ms", candidates.transactions.length, candidates.ranges.size(), settleMillis);
            settle(oracle);
            candidates = candidates.both(candidates(oracle, rangesOnly));
        }
        if (!candidates.isEmpty()) {
            phases.accept(HostedRangeSweep.Phase.SCANNING, candidates.ranges.size());
        }
        // Listed after the settle: a table dropped or disabled meanwhile is seen now, not in the middle of the scan.
        List<TableName> tables = new ArrayList<>();
        Map<TableName, String> skipped = new LinkedHashMap<>();
        Map<TableName, Durability> markerDurability = new LinkedHashMap<>();
        listTables(tables, skipped, markerDurability);
        if (tables.isEmpty() && !candidates.isEmpty()) {
            throw new IllegalStateException("no table to scan in the HBase cluster at "
                    + manager.getConnection().getConfiguration().get("hbase.zookeeper.quorum") + " (skipped: "
                    + skipped + "), yet " + candidates.transactions.length + " aborted transactions and "
                    + candidates.ranges.size() + " aborted ranges to sweep: wrong cluster, or every table excluded?"
                    + " Nothing was reported cleaned up");
        }
        long[] counts = {0, 0};
        for (TableName name : tables) {
            // Markers synced to the WAL even where the table's durability would not: the reports below let the
            // oracle forget these transactions, after which a version whose marker a crash lost reads as committed.
            Durability durability = markerDurability.get(name);
            if (candidates.transactions.length > 0) {
                sweepTransactions(name, candidates.transactions, counts, durability);
            }
            for (AbortedRange range : candidates.ranges) {
                sweepRange(name, range, counts, durability);
            }
        }
        int reported = 0;
        if (!dryRun) {
            for (long ts : candidates.transactions) {
                await(oracle.cleanedUp(ts), "the clean-up report of transaction " + ts);
                reported++;
            }
            for (AbortedRange range : candidates.ranges) {
                await(oracle.rangeCleanedUp(range), "the clean-up report of aborted range " + range);
                reported++;
            }
        }
        Report report = new Report(List.copyOf(tables), skipped, candidates.transactions.length,
                candidates.ranges.size(), counts[0], counts[1], reported, dryRun);
        if (rangesOnly && candidates.isEmpty()) {
            LOG.debug("abort sweep: {}", report); // the leader's background sweep looks often: an empty one is news to no one
        } else {
            LOG.info("abort sweep: {}", report);
        }
        return report;
    }

    /**
     * Waits the settle time, asking the oracle for its watermark every {@link #KEEP_ALIVE_MS} meanwhile: the oracle
     * closes a connection that sent nothing for its idle.timeout.ms (10 minutes by default, as long as the default
     * settle time), and the second look at the candidates would then fail.
     */
    private void settle(OracleClient oracle) throws IOException, InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settleMillis);
        long left = settleMillis;
        while (left > 0) {
            Thread.sleep(Math.min(left, KEEP_ALIVE_MS));
            left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
            if (left > 0) {
                await(oracle.lowWatermark(), "the low watermark");
            }
        }
    }

    /**
     * The tables to scan: those named, or every user table with a family that can hold transactional data, less the
     * excluded. A table is judged by its families one by one: a family added later with one version does not hide
     * the transactional families beside it (a TTable opened before keeps writing to them).
     */
    private void listTables(List<TableName> tables, Map<TableName, String> skipped,
                            Map<TableName, Durability> markerDurability) throws IOException {
        try (Admin admin = manager.getConnection().getAdmin()) {
            for (TableDescriptor d : admin.listTableDescriptors()) {
                TableName name = d.getTableName();
                if (name.isSystemTable()) {
                    continue;
                }
                if (!only.isEmpty() && !only.contains(name)) {
                    skipped.put(name, "not named");
                } else if (excluded.contains(name)) {
                    skipped.put(name, "excluded");
                } else if (!TableFamilies.mayHoldTransactionalData(d)) {
                    skipped.put(name, "no column family can hold transactional data (one version, or a TTL)");
                } else if (!admin.isTableEnabled(name)) {
                    throw new IllegalStateException("table " + name + " is disabled: enable it so its versions can be"
                            + " swept, or exclude it if no transaction writes to it; nothing was reported cleaned up");
                } else {
                    tables.add(name);
                    markerDurability.put(name, TableWrites.durability(d.getDurability()));
                }
            }
        }
        for (TableName name : only) {
            if (!tables.contains(name) && !skipped.containsKey(name)) {
                throw new IllegalArgumentException("table " + name + " was named but does not exist; nothing was"
                        + " reported cleaned up");
            }
        }
    }

    /**
     * Aborted transactions (none with {@code rangesOnly}) and aborted ranges (with their commits known) below the low
     * watermark: none of their transactions runs, none can write any more.
     */
    private static Candidates candidates(OracleClient oracle, boolean rangesOnly)
            throws IOException, InterruptedException {
        // The watermark first: an abort the replica learns later is only left for the next sweep.
        long watermark = await(oracle.lowWatermark(), "the low watermark");
        List<AbortedRange> ranges = oracle.replica().abortedRanges().stream()
                .filter(r -> r.committedKnown() && r.to() < watermark).toList();
        return new Candidates(rangesOnly ? new long[0] : oracle.replica().abortedBelow(watermark), ranges);
    }

    /** Adds the versions found and deleted in {@code name} written at one of the {@code candidates} to counts. */
    private void sweepTransactions(TableName name, long[] candidates, long[] counts, Durability durability)
            throws IOException {
        long found = 0;
        long deleted = 0;
        try (Table table = manager.getConnection().getTable(name)) {
            for (int from = 0; from < candidates.length; from += TIMESTAMPS_PER_SCAN) {
                long[] part = Arrays.copyOfRange(candidates, from,
                        Math.min(candidates.length, from + TIMESTAMPS_PER_SCAN));
                List<Long> timestamps = Arrays.stream(part).boxed().toList();
                // The time range lets region servers skip every file with no version in it (file metadata).
                Scan scan = new Scan().readAllVersions().setTimeRange(part[0], part[part.length - 1] + 1)
                        .setFilter(new TimestampsFilter(timestamps)).setCaching(1000);
                List<Delete> batch = new ArrayList<>();
                try (ResultScanner scanner = table.getScanner(TransactionalScanner.acrossRegions(scan))) {
                    for (Result r : scanner) {
                        Delete d = new Delete(r.getRow()).setDurability(durability);
                        for (Cell cell : r.rawCells()) {
                            d.addColumn(CellUtil.cloneFamily(cell), CellUtil.cloneQualifier(cell),
                                    cell.getTimestamp());
                            found++;
                        }
                        if (!dryRun) {
                            batch.add(d);
                            if (batch.size() >= DELETES_PER_BATCH) {
                                deleted += delete(table, batch);
                            }
                        }
                    }
                }
                deleted += delete(table, batch);
            }
        }
        if (found > 0) {
            LOG.info("{}: {} versions of aborted transactions found, {} deleted", name, found, deleted);
        }
        counts[0] += found;
        counts[1] += deleted;
    }

    /**
     * Deletes in {@code name} every version written in {@code range} by a transaction that did not commit (the
     * range's commits are listed in it), adding to counts. The range's time span bounds the scan, so region servers
     * skip every file without a version in it.
     */
    private void sweepRange(TableName name, AbortedRange range, long[] counts, Durability durability)
            throws IOException {
        long found = 0;
        long deleted = 0;
        try (Table table = manager.getConnection().getTable(name)) {
            Scan scan = new Scan().readAllVersions().setTimeRange(range.from() + 1, range.to() + 1).setCaching(1000);
            List<Delete> batch = new ArrayList<>();
            try (ResultScanner scanner = table.getScanner(TransactionalScanner.acrossRegions(scan))) {
                for (Result r : scanner) {
                    Delete d = null;
                    for (Cell cell : r.rawCells()) {
                        // A fast-path version in the range committed at its own timestamp: never in doubt.
                        if (range.isInDoubt(cell.getTimestamp()) && !Timestamps.isSelfCommitted(cell.getTimestamp())) {
                            if (d == null) {
                                d = new Delete(r.getRow()).setDurability(durability);
                            }
                            d.addColumn(CellUtil.cloneFamily(cell), CellUtil.cloneQualifier(cell),
                                    cell.getTimestamp());
                            found++;
                        }
                    }
                    if (d != null && !dryRun) {
                        batch.add(d);
                        if (batch.size() >= DELETES_PER_BATCH) {
                            deleted += delete(table, batch);
                        }
                    }
                }
            }
            deleted += delete(table, batch);
        }
        if (found > 0) {
            LOG.info("{}: {} versions of transactions in doubt in aborted range {} found, {} deleted", name, found,
                    range, deleted);
        }
        counts[0] += found;
        counts[1] += deleted;
    }

    private static long delete(Table table, List<Delete> batch) throws IOException {
        long cells = 0;
        for (Delete d : batch) {
            cells += d.size();
        }
        if (!batch.isEmpty()) {
            table.delete(batch); // throws if any failed; failed ones stay in the list
            batch.clear();
        }
        return cells;
    }

    private static <T> T await(java.util.concurrent.CompletableFuture<T> f, String what)
            throws IOException, InterruptedException {
        try {
            return f.get(ORACLE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IOException("the status oracle did not answer " + what + ": " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("the status oracle did not answer " + what + " within " + ORACLE_TIMEOUT_SECONDS
                    + " s", e);
        }
    }
}
