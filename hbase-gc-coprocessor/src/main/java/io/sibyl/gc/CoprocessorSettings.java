package io.sibyl.gc;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.client.CoprocessorDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;

import java.util.Map;

/**
 * The settings a Sibyl coprocessor starts with on one region: the region server's configuration under the
 * coprocessor's own properties on the table descriptor, and the oracle they name, reached through the region
 * server's shared {@link OracleLink}.
 */
final class CoprocessorSettings {
    private final Configuration conf;
    private final Map<String, String> properties;
    private final GcSettings settings;

    private CoprocessorSettings(Configuration conf, Map<String, String> properties) {
        this.conf = conf;
        this.properties = properties;
        this.settings = GcSettings.from(conf, properties);
    }

    /**
     * The settings of {@code coprocessor} on the region of {@code env}.
     *
     * @throws IllegalArgumentException if a setting is invalid
     */
    static CoprocessorSettings of(RegionCoprocessorEnvironment env, Class<? extends RegionCoprocessor> coprocessor) {
        return new CoprocessorSettings(env.getConfiguration(),
                tableProperties(env.getRegion().getTableDescriptor(), coprocessor.getName()));
    }

    GcSettings settings() {
        return settings;
    }

    /** The region server's link to the oracle these settings name; pair with {@link OracleLink#release}. */
    OracleLink acquireLink() {
        return OracleLink.acquire(GcSettings.oracleLookup(conf, properties), settings);
    }

    /** A coprocessor's properties on the table descriptor; none when it is loaded for every region. */
    private static Map<String, String> tableProperties(TableDescriptor table, String coprocessor) {
        for (CoprocessorDescriptor c : table.getCoprocessorDescriptors()) {
            if (c.getClassName().equals(coprocessor)) {
                return c.getProperties();
            }
        }
        return Map.of();
    }
}
