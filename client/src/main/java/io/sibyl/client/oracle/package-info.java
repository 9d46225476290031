/**
 * Internal: the client's link to the status oracle (the wire protocol's client side, the replica of commit metadata,
 * leader lookup). Not a public API: no compatibility is promised between releases, even for its public types.
 * Applications use {@link io.sibyl.client.TransactionManager} and {@link io.sibyl.client.TTable}; the public types
 * here are public only because Sibyl's own modules use them (the region-server garbage collector, the admin tool, the
 * benchmarks and the YCSB binding). Kept as a plain package, not behind a JPMS module, since the region-server
 * coprocessor runs from a shaded jar on HBase's class path.
 */
package io.sibyl.client.oracle;
