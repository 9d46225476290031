package io.sibyl.oracle;

/**
 * The shared, append-only stream of durable decision blocks that every connection copies from (paper: "commitinfo,
 * a byte array shared between all the connections"). Each block is encoded once; a connection only keeps a pointer
 * to the last block it sent. Blocks are published in journal order by one thread and read by any.
 */
public final class ReplicationLog {
    /** One published block; {@code endOffset} is the stream offset just after it. */
    public static final class Node {
        final byte[] block;
        final long endOffset;
        volatile Node next;

        Node(byte[] block, long endOffset) {
            this.block = block;
            this.endOffset = endOffset;
        }

        public long endOffset() {
            return endOffset;
        }
    }

    private volatile Node tail = new Node(new byte[0], 0);

    /** Appends a durable block and returns its node. Called by one thread at a time, in journal order. */
    public Node publish(byte[] block) {
        Node t = tail;
        Node n = new Node(block, t.endOffset + block.length);
        t.next = n;
        tail = n;
        return n;
    }

    /** The newest published block: a new connection's starting point, and the end of every copy. */
    public Node tail() {
        return tail;
    }
}
