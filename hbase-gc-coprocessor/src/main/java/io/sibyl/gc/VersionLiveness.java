package io.sibyl.gc;

import org.apache.hadoop.hbase.Cell;

/** Whether HBase still returns a version (no delete marker hides it anywhere in the store, memstore included). */
@FunctionalInterface
interface VersionLiveness {
    /** {@code version} carries row, family, qualifier and timestamp; when unsure, answer false. */
    boolean isLive(Cell version);
}
