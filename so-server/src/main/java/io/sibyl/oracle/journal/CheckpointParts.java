package io.sibyl.oracle.journal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Reassembles a checkpoint journaled as several part entries (see {@link Checkpoint}), in replay order.
 *
 * <p>The parts of one checkpoint are appended one after the other, nothing between them. What replay can meet
 * besides that: a rewritten suffix after a write failure repeats parts from some index on (so a part at or below the
 * count collected replaces those from its index: the copies are the same bytes), and the first registered ledger may
 * open with the tail of a checkpoint whose first parts were in a deleted ledger (parts without their start are
 * ignored: a ledger is only deleted once a complete later checkpoint carries its state).
 */
final class CheckpointParts {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointParts.class);

    private final List<byte[]> collected = new ArrayList<>();
    private int count; // parts of the checkpoint being collected; 0 when none is

    /** Takes one part entry; returns the checkpoint once its last part is in, else null. */
    Checkpoint add(ByteBuf entry) {
        if (!Checkpoint.isPart(entry)) {
            throw new ProtocolException("not a checkpoint part entry");
        }
        entry.skipBytes(2);
        int index = Varints.readBoundedInt(entry, Integer.MAX_VALUE, "checkpoint part index");
        int parts = Varints.readBoundedInt(entry, Integer.MAX_VALUE, "checkpoint part count");
        if (parts < 2 || index >= parts) {
            throw new ProtocolException("checkpoint part " + index + " of " + parts);
        }
        byte[] slice = new byte[entry.readableBytes()];
        entry.readBytes(slice);
        if (index == 0) {
            if (count != 0 && collected.size() < count) {
                LOG.warn("journal: checkpoint of {} parts abandoned after {} (a rewritten copy follows)", count,
                        collected.size());
            }
            collected.clear();
            count = parts;
        } else if (count == 0 || parts != count || index > collected.size()) {
            LOG.info("journal: part {} of {} of a checkpoint whose start is not in the ledgers read; ignored", index,
                    parts);
            return null;
        }
        while (collected.size() > index) {
            collected.remove(collected.size() - 1); // a rewritten suffix repeats parts from here
        }
        collected.add(slice);
        if (collected.size() < count) {
            return null;
        }
        int length = 0;
        for (byte[] b : collected) {
            length += b.length;
        }
        ByteBuf whole = Unpooled.buffer(length);
        for (byte[] b : collected) {
            whole.writeBytes(b);
        }
        collected.clear();
        count = 0;
        return Checkpoint.decode(whole);
    }

    /** True while the parts of a checkpoint are being collected (its first part was read, its last not yet). */
    boolean inProgress() {
        return count != 0;
    }

    /** An entry of decision blocks: an unfinished checkpoint cannot be completed by any later part in order. */
    void blocksSeen() {
        if (count != 0) {
            LOG.warn("journal: decision blocks after part {} of a checkpoint of {} parts; its parts are dropped",
                    collected.size(), count);
            collected.clear();
            count = 0;
        }
    }
}
