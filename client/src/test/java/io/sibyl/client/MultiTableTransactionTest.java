package io.sibyl.client;

import org.apache.hadoop.hbase.client.Scan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** One transaction over several tables commits or aborts as a whole; conflicts are per (table, row). */
@ExtendWith(MiniCluster.class)
class MultiTableTransactionTest {
    private static TransactionManager tm;
    private TTable orders;
    private TTable stock;

    @BeforeAll
    static void manager() throws Exception {
        tm = MiniCluster.get().manager();
    }

    @AfterAll
    static void close() {
        tm.close();
    }

    @BeforeEach
    void tables() throws Exception {
        MiniCluster c = MiniCluster.get();
        orders = new TTable(c.connection(), c.createTable("orders", "cf"));
        stock = new TTable(c.connection(), c.createTable("stock", "cf"));
        Transaction init = tm.begin();
        put(stock, init, "widget", "10");
        tm.commit(init);
    }

    @Test
    void writesToTwoTablesBecomeVisibleTogether() throws Exception {
        Transaction before = tm.begin();
        Transaction tx = tm.begin();
        put(orders, tx, "o1", "widget");
        put(stock, tx, "widget", "9");
        tm.commit(tx);
        assertNull(get(orders, before, "o1"));
        assertEquals("10", get(stock, before, "widget"));
        Transaction after = tm.begin();
        assertEquals("widget", get(orders, after, "o1"));
        assertEquals("9", get(stock, after, "widget"));
        tm.commit(before);
        tm.commit(after);
    }

    @Test
    void conflictInOneTableRollsBackTheWritesInBoth() throws Exception {
        Transaction t1 = tm.begin();
        Transaction t2 = tm.begin();
        put(orders, t1, "o1", "widget");
        put(stock, t1, "widget", "9");
        put(stock, t2, "widget", "8");
        tm.commit(t2);
        RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(t1));
        assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
        Transaction after = tm.begin();
        assertEquals(List.of(), TestSupport.rows(orders, after, new Scan()), "the order went with the conflict");
        assertEquals("8", get(stock, after, "widget"));
        tm.commit(after);
    }

    @Test
    void sameRowKeyInDifferentTablesDoesNotConflict() throws Exception {
        Transaction t1 = tm.begin();
        Transaction t2 = tm.begin();
        put(orders, t1, "widget", "a");
        put(stock, t2, "widget", "7");
        tm.commit(t1);
        tm.commit(t2);
        Transaction after = tm.begin();
        assertEquals("a", get(orders, after, "widget"));
        assertEquals("7", get(stock, after, "widget"));
        tm.commit(after);
    }
}
