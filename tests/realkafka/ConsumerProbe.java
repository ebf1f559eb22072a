// The consumer probe: one KafkaConsumer of the client generation it is compiled against (2.2 to
// 4.4, by tests/realkafka/jars.py clients(version)) resumes a group's committed offset of one
// partition and says, as one JSON line on stdout, where its first fetch went: the offset of the
// first record it got and its position(), or the exception its poll raised. It never commits
// (enable.auto.commit=false), so every probe of a group starts from the same committed offset.
// Its consumer internals log at INFO to stderr (slf4j-simple): the resets and truncations the
// client itself reported. Only APIs of 2.1+ clients, no JSON library (kafka-clients has none).
//
//   java -cp <clients>/lib/*:<clients>/classes ConsumerProbe bootstrap=H:P group=G topic=T
//        partition=N reset=earliest|latest|none [join=assign|subscribe] [timeout_ms=N] [idle_ms=N]

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class ConsumerProbe {
    /** The clients' version as their jar says it (AppInfoParser reads the same file; it moved in 4.x). */
    private static final String VERSION = clientsVersion();

    private static String clientsVersion() {
        Properties p = new Properties();
        try (java.io.InputStream in = KafkaConsumer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in != null) p.load(in);
        } catch (java.io.IOException e) {
            return "unknown";
        }
        return p.getProperty("version", "unknown");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        TopicPartition tp = new TopicPartition(a.get("topic"), Integer.parseInt(a.get("partition")));
        String join = a.getOrDefault("join", "assign");
        long timeoutMs = Long.parseLong(a.getOrDefault("timeout_ms", "30000"));
        // with no record to read (a reset to the log end), the poll ends after this long idle
        long idleMs = Long.parseLong(a.getOrDefault("idle_ms", "6000"));
        Properties props = new Properties();
        props.put("bootstrap.servers", a.get("bootstrap"));
        props.put("group.id", a.get("group"));
        props.put("client.id", "probe-" + VERSION + "-" + a.get("reset"));
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", a.get("reset"));
        props.put("max.poll.records", "1");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("client_version", VERSION);
        out.put("group", a.get("group"));
        out.put("partition", tp.toString());
        out.put("auto_offset_reset", a.get("reset"));
        out.put("join", join);
        long started = System.currentTimeMillis();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            if (join.equals("subscribe")) consumer.subscribe(Collections.singletonList(tp.topic()));
            else consumer.assign(Collections.singletonList(tp));
            long deadline = started + timeoutMs;
            long idleSince = -1;
            int polls = 0;
            try {
                while (System.currentTimeMillis() < deadline) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                    polls++;
                    if (!records.isEmpty()) {
                        ConsumerRecord<byte[], byte[]> first = records.iterator().next();
                        out.put("first_offset", first.offset());
                        out.put("first_leader_epoch", first.leaderEpoch().orElse(null));
                        break;
                    }
                    boolean assigned = consumer.assignment().contains(tp);
                    if (assigned && idleSince < 0) idleSince = System.currentTimeMillis();
                    if (assigned && System.currentTimeMillis() - idleSince >= idleMs) break;
                }
                out.put("polls", polls);
            } catch (Exception e) {
                out.put("polls", polls);
                out.put("exception", e.getClass().getSimpleName());
                out.put("exception_class", e.getClass().getName());
                out.put("message", e.getMessage());
            }
            // where it stands after the polls; a consumer that neither read nor raised may have no
            // position to give (a validation that never completes): position() then times out
            if (!out.containsKey("exception") && consumer.assignment().contains(tp)) {
                try {
                    out.put("position", consumer.position(tp, Duration.ofSeconds(5)));
                } catch (Exception e) {
                    out.put("position", null);
                    out.put("position_exception", e.getClass().getSimpleName());
                    out.put("position_message", e.getMessage());
                }
            }
        }
        out.put("elapsed_ms", System.currentTimeMillis() - started);
        System.out.println(json(out));
    }

    private static String json(Map<String, Object> map) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : map.entrySet()) {
            if (b.length() > 1) b.append(", ");
            b.append(quote(e.getKey())).append(": ");
            Object v = e.getValue();
            if (v == null) b.append("null");
            else if (v instanceof Number || v instanceof Boolean) b.append(v);
            else b.append(quote(v.toString()));
        }
        return b.append("}").toString();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
