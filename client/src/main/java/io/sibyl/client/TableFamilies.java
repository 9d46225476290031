package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a {@link TTable} keeps of its table's descriptor: the column families, each checked fit for transactional
 * data, and the table's durability. Read when the table is opened, and again when a request names a family not
 * seen yet (the table may have been altered since).
 */
final class TableFamilies {
    /** Tables (with their durability) already logged about, so that opening one often logs once. */
    private static final Set<String> WARNED_DURABILITY = ConcurrentHashMap.newKeySet();

    private final Connection connection;
    private final TableName name;
    /** The column families as of the last look at the table's descriptor (replaced whole, never mutated). */
    private volatile NavigableSet<byte[]> families;
    /** The table's durability as of the last look at its descriptor (from which a transaction's writes get theirs). */
    private volatile Durability durability = Durability.USE_DEFAULT;

    /**
     * Reads the table's descriptor.
     *
     * @throws TableNotFoundException if the table does not exist
     * @throws IllegalArgumentException if a column family cannot hold transactional data
     */
    TableFamilies(Connection connection, TableName name) throws IOException {
        this.connection = connection;
        this.name = name;
        this.families = open();
    }

    /** {@link #read()} for opening the table: a failure there is most often an HBase that cannot be reached. */
    private NavigableSet<byte[]> open() throws IOException {
        try {
            return read();
        } catch (TableNotFoundException | InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            // HBase's own text ("Zookeeper GET could not be completed in 10000 ms") names neither table nor cluster.
            Configuration conf = connection.getConfiguration();
            String port = conf.get(HConstants.ZOOKEEPER_CLIENT_PORT,
                    String.valueOf(HConstants.DEFAULT_ZOOKEEPER_CLIENT_PORT));
            throw new IOException("cannot open table " + name + ": HBase at ZooKeeper "
                    + conf.get(HConstants.ZOOKEEPER_QUORUM) + " (client port " + port + ") did not give its descriptor: "
                    + e.getMessage() + "; check that HBase runs and the client's hbase.zookeeper.quorum"
                    + " (hbase-site.xml)", e);
        }
    }

    /**
     * The table's column families, from its current descriptor, after checking that each can hold transactional
     * data.
     */
    private NavigableSet<byte[]> read() throws IOException {
        TableDescriptor descriptor;
        try (Table t = connection.getTable(name)) {
            descriptor = t.getDescriptor();
        } catch (TableNotFoundException e) {
            TableNotFoundException clear = new TableNotFoundException("table " + name + " does not exist; create"
                    + " it first (Admin.createTable) with families that keep all versions, e.g."
                    + " TTable.familyDescriptor(\"cf\")");
            clear.initCause(e);
            throw clear;
        }
        requireTransactionalFamilies(descriptor);
        Durability d = descriptor.getDurability();
        if ((d == Durability.SKIP_WAL || d == Durability.ASYNC_WAL) && WARNED_DURABILITY.add(name + "=" + d)) {
            TransactionManager.LOG.info("table {} has DURABILITY => {}: transactions write to it with SYNC_WAL all"
                    + " the same, since a region server crash must not lose part of a committed transaction (plain"
                    + " writes keep the table's durability)", name, d);
        }
        durability = d;
        NavigableSet<byte[]> found = new TreeSet<>(Bytes.BYTES_COMPARATOR);
        for (ColumnFamilyDescriptor f : descriptor.getColumnFamilies()) {
            found.add(f.getName());
            if (f.getMaxVersions() < Integer.MAX_VALUE / 2) {
                TransactionManager.LOG.warn("column family {} of {} keeps at most {} versions: a hot cell can lose the"
                        + " version an older snapshot needs; use Integer.MAX_VALUE", f.getNameAsString(), name,
                        f.getMaxVersions());
            }
        }
        return Collections.unmodifiableNavigableSet(found);
    }

    /** The table's durability as of the last look at its descriptor. */
    Durability durability() {
        return durability;
    }

    /** Throws unless the table has {@code family}, looking at its descriptor again before saying it has not. */
    void check(byte[] family) throws IOException {
        if (!families.contains(family)) {
            // The table may have been altered since (Admin.addColumnFamily): a plain Table would use the new family.
            refresh();
        }
        if (!families.contains(family)) {
            throw new NoSuchColumnFamilyException("column family " + Bytes.toStringBinary(family) + " does not exist"
                    + " in table " + name + " (families: " + names() + ")");
        }
    }

    private synchronized void refresh() throws IOException {
        families = read();
    }

    private String names() {
        List<String> names = new ArrayList<>();
        for (byte[] f : families) {
            names.add(Bytes.toStringBinary(f));
        }
        return String.join(", ", names);
    }

    /**
     * Throws unless every column family of {@code descriptor} can hold transactional data (more than one version, no
     * TTL): a table that fails this cannot be opened as a {@code TTable}, so no transaction ever wrote to it.
     *
     * @throws IllegalArgumentException naming the family and what to change
     */
    static void requireTransactionalFamilies(TableDescriptor descriptor) {
        TableName tableName = descriptor.getTableName();
        for (ColumnFamilyDescriptor f : descriptor.getColumnFamilies()) {
            if (f.getMaxVersions() < 2) {
                throw new IllegalArgumentException("column family " + f.getNameAsString() + " of " + tableName
                        + " keeps " + f.getMaxVersions() + " version; transactions need every version: alter it with"
                        + " setMaxVersions(Integer.MAX_VALUE) (see TTable.familyDescriptor)");
            }
            if (f.getTimeToLive() != HConstants.FOREVER) {
                throw new IllegalArgumentException("column family " + f.getNameAsString() + " of " + tableName
                        + " has a TTL; cell timestamps are transaction timestamps, not wall-clock time, so HBase would"
                        + " expire them at once: remove the TTL");
            }
            if (f.isNewVersionBehavior()) {
                // There a delete marker hides only versions written before it: a write of an aborted transaction
                // that HBase applies late (a retried or stalled call) would outlive the clean-up's delete marker.
                throw new IllegalArgumentException("column family " + f.getNameAsString() + " of " + tableName
                        + " has NEW_VERSION_BEHAVIOR=true, under which a version written after its delete marker stays"
                        + " visible, so a late write of an aborted transaction could outlive its clean-up: alter it"
                        + " with setNewVersionBehavior(false)");
            }
        }
    }

    /**
     * True if some column family of {@code descriptor} could hold transactional data (more than one version, no TTL):
     * a table with none was never opened as a {@code TTable}, unless all its families were altered since.
     */
    static boolean mayHoldTransactionalData(TableDescriptor descriptor) {
        for (ColumnFamilyDescriptor f : descriptor.getColumnFamilies()) {
            if (f.getMaxVersions() >= 2 && f.getTimeToLive() == HConstants.FOREVER) {
                return true;
            }
        }
        return false;
    }
}
