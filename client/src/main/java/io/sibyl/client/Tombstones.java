package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.util.Bytes;

import java.nio.charset.StandardCharsets;

/**
 * A transactional delete is an ordinary cell, written at the transaction's start timestamp, whose value is this
 * marker (docs/data-model.md). It is resolved like any other version, so a delete is invisible to other snapshots
 * until it commits and removed with the transaction's other versions if it aborts. Users cannot store the marker.
 */
public final class Tombstones {
    /** 24 bytes that start and end with NUL: "\0sibyl:tombstone:v1\0\0\0\0\0" is not a plausible user value. */
    static final byte[] VALUE = "\0sibyl:tombstone:v1\0\0\0\0\0".getBytes(StandardCharsets.ISO_8859_1);

    private Tombstones() {
    }

    static boolean isTombstone(byte[] value) {
        return value != null && value.length == VALUE.length && Bytes.equals(value, VALUE);
    }

    /** True if {@code cell} holds the marker: a transactional delete (the region-server garbage collector asks). */
    public static boolean isTombstone(Cell cell) {
        return cell.getValueLength() == VALUE.length && Bytes.equals(cell.getValueArray(), cell.getValueOffset(),
                cell.getValueLength(), VALUE, 0, VALUE.length);
    }
}
