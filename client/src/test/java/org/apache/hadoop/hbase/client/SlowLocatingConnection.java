package org.apache.hadoop.hbase.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.RegionLocations;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.security.User;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Map;
import java.util.concurrent.ExecutorService;

/**
 * HBase's connection, with region location lookups of one table that can be made to take long once, as a slow
 * hbase:meta (or a region server holding it that is failing over) makes them. Set {@code hbase.client.connection.impl}
 * to this class. In the package of {@link ConnectionImplementation}, whose constructor is package-private.
 */
public class SlowLocatingConnection extends ConnectionImplementation {
    /** The table whose next location lookup takes {@link #delayMillis}. */
    public static volatile TableName slowTable;
    /** How long the next lookup of {@link #slowTable} takes; 0: lookups are not slowed. Reset by that lookup. */
    public static volatile long delayMillis;

    SlowLocatingConnection(Configuration conf, ExecutorService pool, User user, Map<String, byte[]> attributes)
            throws IOException {
        super(conf, pool, user, attributes);
    }

    @Override
    public RegionLocations locateRegion(TableName tableName, byte[] row, boolean useCache, boolean retry,
                                        int replicaId) throws IOException {
        long delay = delayMillis;
        if (delay > 0 && tableName.equals(slowTable)) {
            delayMillis = 0;
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while slowly locating a region");
            }
        }
        return super.locateRegion(tableName, row, useCache, retry, replicaId);
    }
}
