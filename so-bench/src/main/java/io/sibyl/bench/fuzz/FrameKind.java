package io.sibyl.bench.fuzz;

/** The kinds of frame the attackers send; each counts towards the run's {@code --frames}. */
enum FrameKind {
    /** Well-formed requests that a stranger may not make or that cannot succeed (foreign aborts, bad proofs, ...). */
    HOSTILE("hostile requests"),
    /** Well-formed requests with 1-4 bytes of the body changed at random. */
    MUTATED("mutated requests"),
    /** A frame that breaks one rule of the format (unknown type, overlong varint, zero timestamp, ...). */
    MALFORMED("malformed requests"),
    /** Random bytes after a good handshake, under a length prefix that matches them. */
    RANDOM_BODY("random bytes"),
    /** Random bytes as the very first thing a connection sends. */
    RANDOM_FIRST("random first bytes"),
    /** Bad magic, wrong version, unknown role, odd lengths. */
    BAD_HANDSHAKE("bad handshakes"),
    /** The bytes of a TLS ClientHello record sent as the handshake. */
    TLS("TLS ClientHellos"),
    /** A length prefix above max.frame.bytes, or negative. */
    OVERSIZED("oversized length prefixes"),
    /** A frame cut short, after which the attacker drops the connection. */
    TRUNCATED("truncated frames");

    final String label;

    FrameKind(String label) {
        this.label = label;
    }
}
