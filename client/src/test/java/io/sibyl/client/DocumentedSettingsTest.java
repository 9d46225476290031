package io.sibyl.client;

import io.sibyl.oracle.DocTables;
import io.sibyl.protocol.settings.Setting;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The user guide's Settings table lists exactly the client's keys, with the defaults the client uses. */
class DocumentedSettingsTest {

    @Test
    void theUserGuideListsEveryClientKeyWithItsDefault() throws Exception {
        Map<String, String> documented = DocTables.settingsTable(Path.of("..", "docs", "user-guide.md"), "## Settings");
        TreeSet<String> keys = new TreeSet<>();
        for (Field f : TransactionManager.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class
                    && ((String) f.get(null)).startsWith("sibyl.")) {
                keys.add((String) f.get(null));
            }
        }
        assertEquals(keys, new TreeSet<>(documented.keySet()), "docs/user-guide.md, Settings, against"
                + " TransactionManager's keys");

        ClientSettings d = ClientSettings.from(new Configuration(false));
        Map<String, Object> defaults = new LinkedHashMap<>();
        defaults.put(TransactionManager.ORACLE_ZK_CONNECT, "—");
        defaults.put(TransactionManager.ORACLE_ADDRESS, "—");
        defaults.put(TransactionManager.ORACLE_LEADER_ZNODE, TransactionManager.DEFAULT_LEADER_ZNODE);
        defaults.put(TransactionManager.ORACLE_ZK_AUTH_FILE, "—");
        for (Setting<ClientSettings, ?> declared : ClientSettings.SPEC.settings()) {
            defaults.put(declared.key(), declared.valueText(d)); // the declarations' defaults, as the client reads them
        }
        for (Map.Entry<String, Object> e : defaults.entrySet()) {
            assertEquals(String.valueOf(e.getValue()), documented.get(e.getKey()), "default of " + e.getKey());
        }
    }
}
