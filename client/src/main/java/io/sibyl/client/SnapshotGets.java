package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NavigableMap;

/**
 * The gets of one table in a transaction ({@link TTable#get(Transaction, List)}): one HBase multi-get of the
 * versions up to the transaction's start, resolved to its snapshot ({@link SnapshotReader}) and overlaid with its
 * own buffered writes; filters and per-family limits then run on the client.
 */
final class SnapshotGets {
    private final Connection connection;
    private final TableName name;
    private final RequestChecks checks;

    SnapshotGets(Connection connection, TableName name, RequestChecks checks) {
        this.connection = connection;
        this.name = name;
        this.checks = checks;
    }

    /** Reads {@code gets} in {@code own}'s snapshot (checked usable); one result each, empty if nothing is visible. */
    Result[] read(HBaseTransaction own, List<Get> gets) throws IOException {
        long ts = own.getStartTimestamp();
        int nv = own.manager().settings().readVersions();
        List<Get> raw = new ArrayList<>(gets.size());
        for (Get g : gets) {
            checks.get(g);
            own.rowRead(name.getName(), g.getRow());
            Get r = new Get(g);
            r.setFilter(null);
            r.setTimeRange(0, ts + 1);
            r.readVersions(nv);
            r.setMaxResultsPerColumnFamily(-1);
            r.setRowOffsetPerColumnFamily(0);
            r.setCheckExistenceOnly(false);
            raw.add(r);
        }
        Result[] out = new Result[gets.size()];
        // The transaction's own buffered writes are copied before HBase is read: a flush by another thread (a put
        // filling the buffer, a commit) moves them from the buffer to HBase, and a read that fetched from HBase first
        // and looked at the buffer after would find them in neither. Copied first, they are in the copy or, if sent
        // before the copy, already in HBase when it is read (a flush holds the transaction until they are).
        List<NavigableMap<byte[], NavigableMap<byte[], byte[]>>> ownWrites = new ArrayList<>(gets.size());
        for (Get g : gets) {
            ownWrites.add(own.writes().bufferedRow(name, g.getRow()));
        }
        List<List<Cell>> resolved;
        try (Table t = connection.getTable(name)) {
            Result[] fetched = raw.size() == 1 ? new Result[] {t.get(raw.get(0))} : t.get(raw);
            own.snapshot().checkReadable();
            SnapshotReader reader = new SnapshotReader(own.snapshot(), t, nv);
            for (int i = 0; i < out.length; i++) {
                Get g = gets.get(i);
                if (g.getFilter() == null && g.getMaxResultsPerColumnFamily() < 0
                        && g.getRowOffsetPerColumnFamily() <= 0 && !g.isCheckExistenceOnly()
                        && reader.isAlreadySnapshot(fetched[i]) && ownWrites.get(i) == null) {
                    out[i] = fetched[i]; // fast path: HBase's own result is the snapshot
                    fetched[i] = null;
                }
            }
            resolved = reader.resolve(fetched);
        } catch (IOException e) {
            Interrupts.keepInterrupt(e); // HBase cleared the interrupt flag it turned into InterruptedIOException
            throw e;
        }
        for (int i = 0; i < out.length; i++) {
            if (out[i] != null) {
                continue;
            }
            Get g = gets.get(i);
            List<Cell> cells = SnapshotReader.overlay(resolved.get(i), g.getRow(), ownWrites.get(i), g.getFamilyMap(),
                    ts);
            cells = new ClientSideFilter(g.getFilter(), g.getMaxResultsPerColumnFamily(),
                    g.getRowOffsetPerColumnFamily()).apply(cells);
            if (g.isCheckExistenceOnly()) {
                out[i] = Result.create((List<Cell>) null, cells != null);
            } else {
                out[i] = cells == null ? Result.create(Collections.emptyList()) : Result.create(cells);
            }
        }
        own.checkResolvedInTime(); // finished, ending or too old meanwhile: the snapshot may have shifted
        return out;
    }
}
