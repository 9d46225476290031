package io.sibyl.gc;

import org.apache.hadoop.hbase.CoprocessorEnvironment;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.slf4j.Logger;

import java.util.function.Consumer;

/**
 * The start both Sibyl coprocessors share on a region: they leave HBase's own tables alone, and read their settings
 * without throwing, since a coprocessor that throws from {@code start} can abort the region server.
 */
final class CoprocessorStart {
    private CoprocessorStart() {
    }

    /**
     * The environment of {@code env}'s region if it is a region of a user table, else null: a coprocessor loaded for
     * every region (hbase.coprocessor.region.classes) also starts on HBase's own tables, which are not Sibyl's.
     */
    static RegionCoprocessorEnvironment userRegion(CoprocessorEnvironment env) {
        if (env instanceof RegionCoprocessorEnvironment region
                && !region.getRegion().getRegionInfo().getTable().isSystemTable()) {
            return region;
        }
        return null;
    }

    /**
     * Hands {@code configure} the settings of {@code coprocessor} on the region of {@code env}. An invalid setting (a
     * RuntimeException from reading them or from {@code configure}) is logged, not thrown: {@code error} is an SLF4J
     * format given the region's encoded name and the exception's message, and says what the region goes without.
     */
    static void configure(RegionCoprocessorEnvironment env, Class<? extends RegionCoprocessor> coprocessor,
                          Logger log, String error, Consumer<CoprocessorSettings> configure) {
        try {
            configure.accept(CoprocessorSettings.of(env, coprocessor));
        } catch (RuntimeException e) {
            log.error(error, env.getRegion().getRegionInfo().getEncodedName(), e.getMessage());
        }
    }
}
