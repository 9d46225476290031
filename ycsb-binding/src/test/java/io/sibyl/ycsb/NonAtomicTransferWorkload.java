package io.sibyl.ycsb;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

/**
 * A deliberately broken closed economy, for YcsbClosedEconomyTest: each transfer reads and writes its two balances
 * as four transactions of their own instead of one, with a pause between the reads and the writes. Concurrent
 * transfers then overwrite each other's updates (lost updates) and audits can see money in flight: the workload's
 * checks must catch it.
 */
public class NonAtomicTransferWorkload extends ClosedEconomyWorkload {
    @Override
    protected Status transferOnce(DB db, String table, String from, String to, long amount) {
        Map<String, ByteIterator> a = new HashMap<>();
        Map<String, ByteIterator> b = new HashMap<>();
        Status read = db.read(table, from, Set.of(Accounts.BALANCE), a);
        if (read.isOk()) {
            read = db.read(table, to, Set.of(Accounts.BALANCE), b);
        }
        if (!read.isOk()) {
            return read;
        }
        LockSupport.parkNanos(2_000_000);
        long payer = balanceOf(a);
        long moved = Math.min(amount, payer);
        Status write = db.update(table, from, balance(payer - moved));
        return write.isOk() ? db.update(table, to, balance(balanceOf(b) + moved)) : write;
    }
}
