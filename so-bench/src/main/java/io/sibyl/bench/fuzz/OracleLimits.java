package io.sibyl.bench.fuzz;

/**
 * What the attackers need to know of the oracle under attack: where it is, its limits from a HELLO, and its admin
 * secret if the run has it (to send proofs that are nearly right: the right secret over another connection's nonce).
 */
record OracleLimits(String host, int port, long maxWriteSetRows, long maxFrameBytes, byte[] adminSecret) {
    /** Probes the oracle with one handshake for its limits. */
    static OracleLimits probe(String host, int port, byte[] adminSecret) throws java.io.IOException {
        try (RawConnection c = RawConnection.open(host, port)) {
            c.handshake(0);
            return new OracleLimits(host, port, c.maxWriteSetRows(), c.maxFrameBytes(), adminSecret);
        }
    }
}
