package io.sibyl.gc;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.regionserver.InternalScanner;
import org.apache.hadoop.hbase.regionserver.ScannerContext;
import org.apache.hadoop.hbase.regionserver.Shipper;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * HBase's compactor releases the blocks behind each written batch only through a scanner that is a {@link Shipper}:
 * the collector's wrapper must stay one and pass the call on.
 */
class GcScannerShipperTest {

    /** A store scanner stand-in that counts the releases it is asked for. */
    private static final class CountingScanner implements InternalScanner, Shipper {
        int shipped;

        @Override
        public boolean next(List<Cell> result, ScannerContext scannerContext) {
            return false;
        }

        @Override
        public void close() {
        }

        @Override
        public void shipped() {
            shipped++;
        }
    }

    @Test
    void compactionBatchesShippedThroughTheCollectorReleaseTheStoreScannersBlocks() throws Exception {
        CountingScanner store = new CountingScanner();
        InternalScanner collector = new GcScanner(store, null, null, false, "test");
        assertInstanceOf(Shipper.class, collector, "the compactor only ships through a Shipper");
        ((Shipper) collector).shipped();
        ((Shipper) collector).shipped();
        assertEquals(2, store.shipped);
    }
}
