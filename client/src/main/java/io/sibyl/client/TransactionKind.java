package io.sibyl.client;

/**
 * What a transaction may do, and so which way it ends. Every transaction is {@link #READ_WRITE} today. The planned
 * fast paths are kinds of their own: a read-only transaction begun from the local replica, which the oracle never
 * hears of and which takes no writes; and a single-row transaction that the region server commits. Each would bring
 * its own path through {@link TransactionPhase} (the first ends without the oracle, the second at the region
 * server), leaving the phases and the transitions of this kind as they are.
 */
enum TransactionKind {
    /** Begun at the oracle, reads and writes any rows, commits at the oracle with its write set. */
    READ_WRITE
}
