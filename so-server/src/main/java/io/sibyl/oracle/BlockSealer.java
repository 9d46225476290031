package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;

import java.util.List;

/**
 * Closes the sequencer's current block: seals the decisions, hands the block to the {@link Journal}, and once it is
 * durable (and the serving lease allows) publishes it for replication and releases the replies written meanwhile.
 * Runs on the thread that owns the state, between requests.
 */
final class BlockSealer {
    private final OracleState state;
    private final Journal journal;
    private final ReplicationLog log;
    private final ReplyHold replyHold;
    private final OracleMetrics metrics;
    /** Sessions with replies in the block being built; shared with the sequencer, which adds to it. */
    private final List<ClientSession> touched;

    BlockSealer(OracleState state, Journal journal, ReplicationLog log, ReplyHold replyHold, OracleMetrics metrics,
                List<ClientSession> touched) {
        this.state = state;
        this.journal = journal;
        this.log = log;
        this.replyHold = replyHold;
        this.metrics = metrics;
        this.touched = touched;
    }

    /**
     * Seals the block of {@code requests} requests, its first BEGIN and COMMIT decided at {@code firstBegin} and
     * {@code firstCommit} (latency samples); {@code handshakeCursors}: a session of it had its handshake in it, and
     * starts its replication at the cursor taken then.
     */
    void seal(int requests, long firstBegin, long firstCommit, boolean handshakeCursors) {
        byte[] block = state.sealBlock();
        if (block == null && touched.isEmpty()) {
            return;
        }
        long sealedNanos = System.nanoTime();
        int n = touched.size();
        ClientSession[] sessions = touched.toArray(new ClientSession[n]);
        ByteBuf[] replies = new ByteBuf[n];
        ReplicationLog.Node[] cursors = handshakeCursors ? new ReplicationLog.Node[n] : null;
        for (int i = 0; i < n; i++) {
            ClientSession s = sessions[i];
            replies[i] = s.pendingReplies;
            s.pendingReplies = null;
            s.deliveryScheduled(); // before the block is published: no push may overtake these replies
            if (cursors != null) {
                cursors[i] = s.startCursor;
                s.startCursor = null;
            }
        }
        touched.clear();
        Runnable release = () -> {
            // The replies go out with the metadata up to their own block, never a later one: a later block can hold
            // a commit after a start timestamp replied here, and a replica must learn T_s before such a commit.
            ReplicationLog.Node upTo = block != null ? log.publish(block) : log.tail();
            for (int i = 0; i < n; i++) {
                sessions[i].deliver(replies[i], cursors == null ? null : cursors[i], upTo);
            }
        };
        // A block without records was not written: its replies (begins, queries) leave only while the lease holds.
        boolean journaled = block != null;
        int blockBytes = journaled ? block.length : 0;
        journal.append(block, () -> {
            long durableNanos = System.nanoTime();
            metrics.blockDurable(requests, blockBytes, sealedNanos, durableNanos);
            replyHold.release(() -> {
                metrics.repliesReleased(durableNanos, System.nanoTime(), firstBegin, firstCommit);
                release.run();
            }, journaled);
        });
        if (journal.wantsCheckpoint()) {
            // Here, and only here, the state is exactly what the journal holds: nothing decided since the append.
            journal.appendCheckpoint(state.checkpoint());
        }
    }
}
