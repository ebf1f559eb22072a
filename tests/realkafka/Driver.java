// The scenario driver: Kafka's own Java clients of the release under test, driven one JSON command
// per line on stdin, one JSON answer per line on stdout. One JVM per scenario, so a command costs a
// round trip and not a JVM start. Compiled by tests/realkafka/driver.py against the release's jars;
// the calls whose names moved between releases (2.8 to 4.4) are looked up by reflection.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;

public final class Driver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long TIMEOUT_S = 30;

    private final String bootstrap;
    private final Admin admin;
    private final Map<String, Background> background = new ConcurrentHashMap<>();
    /** Kafka Streams applications started by streams_start, by application id (its group) */
    private final Map<String, org.apache.kafka.streams.KafkaStreams> streams = new ConcurrentHashMap<>();
    /** Transactional producers left inside a transaction: kept, never closed, as a crashed client */
    private final List<KafkaProducer<String, String>> abandoned = new ArrayList<>();

    private Driver(String bootstrap) {
        this.bootstrap = bootstrap;
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put("default.api.timeout.ms", "20000");
        // KIP-899 (3.8+; older clients ignore it with a warning): when every broker the client
        // knows is down, go back to the bootstrap list instead of waiting on the dead ones
        props.put("metadata.recovery.strategy", "rebootstrap");
        this.admin = Admin.create(props);
    }

    public static void main(String[] args) throws Exception {
        Driver driver = new Driver(args[0]);
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Map<String, Object> answer = new LinkedHashMap<>();
            try {
                answer.put("ok", driver.handle(JSON.readTree(line)));
            } catch (Throwable e) {
                Throwable cause = e.getCause() != null && e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
                answer.put("error", cause.getClass().getName() + ": " + cause.getMessage());
            }
            out.println(JSON.writeValueAsString(answer));
        }
        for (org.apache.kafka.streams.KafkaStreams app : driver.streams.values()) app.close(java.time.Duration.ofSeconds(TIMEOUT_S));
        driver.admin.close();
    }

    private Object handle(JsonNode cmd) throws Exception {
        switch (cmd.get("op").asText()) {
            case "cluster": return cluster();
            case "create_topic": return createTopic(cmd);
            case "describe": return describe(cmd);
            case "produce": return produce(cmd);
            case "produce_start": return produceStart(cmd);
            case "produce_stop": return produceStop(cmd);
            case "log_dirs": return logDirs(cmd);
            case "quorum": return quorum();
            case "elect": return elect(cmd);
            case "alter_config": return alterConfig(cmd);
            case "consume": return consume(cmd);
            case "alter_offsets": return alterOffsets(cmd);
            case "groups": return groups();
            case "txn": return txn(cmd);
            case "transactions": return transactions(cmd);
            case "reassignments": return reassignments();
            case "configs": return configs(cmd);
            case "delete_records": return deleteRecords(cmd);
            case "unregister_broker": return unregisterBroker(cmd);
            case "share_consume": return shareConsume(cmd);
            case "share_groups": return shareGroups();
            case "streams_start": return streamsStart(cmd);
            case "streams_stop": return streamsStop(cmd);
            case "streams_groups": return streamsGroups();
            default: throw new IllegalArgumentException("unknown op " + cmd.get("op"));
        }
    }

    private Object cluster() throws Exception {
        DescribeClusterResult result = admin.describeCluster();
        Map<String, Object> out = new LinkedHashMap<>();
        Node controller = result.controller().get(TIMEOUT_S, TimeUnit.SECONDS);
        out.put("controller", controller == null || controller.isEmpty() ? null : controller.id());
        List<Integer> brokers = new ArrayList<>();
        for (Node node : result.nodes().get(TIMEOUT_S, TimeUnit.SECONDS)) brokers.add(node.id());
        brokers.sort(null);
        out.put("brokers", brokers);
        out.put("cluster_id", result.clusterId().get(TIMEOUT_S, TimeUnit.SECONDS));
        return out;
    }

    private Object createTopic(JsonNode cmd) throws Exception {
        NewTopic topic;
        if (cmd.has("assignment")) {
            Map<Integer, List<Integer>> assignment = new TreeMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = cmd.get("assignment").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                List<Integer> replicas = new ArrayList<>();
                for (JsonNode r : e.getValue()) replicas.add(r.asInt());
                assignment.put(Integer.parseInt(e.getKey()), replicas);
            }
            topic = new NewTopic(cmd.get("topic").asText(), assignment);
        } else {
            topic = new NewTopic(cmd.get("topic").asText(), cmd.get("partitions").asInt(), (short) cmd.get("rf").asInt());
        }
        topic.configs(strings(cmd.get("configs")));
        admin.createTopics(List.of(topic)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return cmd.get("topic").asText();
    }

    /** incrementalAlterConfigs of one topic or broker ({"type": "topic"|"broker", "name": ...}). */
    private Object alterConfig(JsonNode cmd) throws Exception {
        ConfigResource.Type type = ConfigResource.Type.valueOf(cmd.get("type").asText().toUpperCase());
        ConfigResource resource = new ConfigResource(type, cmd.get("name").asText());
        List<AlterConfigOp> ops = new ArrayList<>();
        for (Map.Entry<String, String> e : strings(cmd.get("configs")).entrySet()) {
            ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET));
        }
        admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return cmd.get("name").asText();
    }

    @SuppressWarnings("unchecked")
    private Object describe(JsonNode cmd) throws Exception {
        List<String> names = new ArrayList<>();
        for (JsonNode t : cmd.get("topics")) names.add(t.asText());
        Object result = admin.describeTopics(names);
        Map<String, TopicDescription> topics = (Map<String, TopicDescription>) future(result, "allTopicNames", "all");
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (TopicDescription d : topics.values()) {
            for (TopicPartitionInfo p : d.partitions()) {
                TopicPartition tp = new TopicPartition(d.name(), p.partition());
                earliest.put(tp, OffsetSpec.earliest());
                latest.put(tp, OffsetSpec.latest());
            }
        }
        boolean offsets = cmd.path("offsets").asBoolean(true);
        Map<TopicPartition, Object> first = offsets ? listOffsets(earliest) : Map.of();
        Map<TopicPartition, Object> last = offsets ? listOffsets(latest) : Map.of();
        List<Object> out = new ArrayList<>();
        for (String name : new java.util.TreeSet<>(topics.keySet())) {
            TopicDescription d = topics.get(name);
            for (TopicPartitionInfo p : d.partitions()) {
                TopicPartition tp = new TopicPartition(name, p.partition());
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("topic", name);
                row.put("partition", p.partition());
                row.put("leader", p.leader() == null || p.leader().isEmpty() ? -1 : p.leader().id());
                row.put("replicas", ids(p.replicas()));
                row.put("isr", ids(p.isr()));
                Object elr = call(p, "elr");
                if (elr != null) row.put("elr", ids((List<Node>) elr));
                Object lastKnownElr = call(p, "lastKnownElr");
                if (lastKnownElr != null) row.put("last_known_elr", ids((List<Node>) lastKnownElr));
                if (first.get(tp) instanceof String) row.put("offsets_error", first.get(tp));
                if (first.containsKey(tp) && !(first.get(tp) instanceof String)) row.put("earliest", call(first.get(tp), "offset"));
                if (last.containsKey(tp) && !(last.get(tp) instanceof String)) {
                    row.put("latest", call(last.get(tp), "offset"));
                    Object epoch = call(last.get(tp), "leaderEpoch");
                    if (epoch instanceof java.util.Optional && ((java.util.Optional<?>) epoch).isPresent()) row.put("leader_epoch", ((java.util.Optional<?>) epoch).get());
                }
                out.add(row);
            }
        }
        return out;
    }

    /** Each partition's answer, or its error's name: an offline partition has no offsets to give. */
    private Map<TopicPartition, Object> listOffsets(Map<TopicPartition, OffsetSpec> specs) throws Exception {
        org.apache.kafka.clients.admin.ListOffsetsOptions options = new org.apache.kafka.clients.admin.ListOffsetsOptions();
        options.timeoutMs(5000);
        org.apache.kafka.clients.admin.ListOffsetsResult result = admin.listOffsets(specs, options);
        Map<TopicPartition, Object> out = new HashMap<>();
        for (TopicPartition tp : specs.keySet()) {
            try {
                out.put(tp, result.partitionResult(tp).get(TIMEOUT_S, TimeUnit.SECONDS));
            } catch (java.util.concurrent.ExecutionException e) {
                out.put(tp, e.getCause().getClass().getSimpleName());
            }
        }
        return out;
    }

    private Object logDirs(JsonNode cmd) throws Exception {
        List<Integer> brokers = new ArrayList<>();
        for (JsonNode b : cmd.get("brokers")) brokers.add(b.asInt());
        Object result = admin.describeLogDirs(brokers);
        Map<?, ?> byBroker = (Map<?, ?>) future(result, "allDescriptions", "all");
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<?, ?> broker : byBroker.entrySet()) {
            Map<String, Object> dirs = new TreeMap<>();
            for (Map.Entry<?, ?> dir : ((Map<?, ?>) broker.getValue()).entrySet()) {
                Map<String, Object> partitions = new TreeMap<>();
                Map<?, ?> infos = (Map<?, ?>) call(dir.getValue(), "replicaInfos");
                if (infos == null) infos = (Map<?, ?>) field(dir.getValue(), "replicaInfos");
                for (Map.Entry<?, ?> info : infos.entrySet()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("size", number(info.getValue(), "size"));
                    row.put("offset_lag", number(info.getValue(), "offsetLag"));
                    row.put("is_future", call(info.getValue(), "isFuture") != null ? call(info.getValue(), "isFuture") : field(info.getValue(), "isFuture"));
                    partitions.put(info.getKey().toString(), row);
                }
                dirs.put(dir.getKey().toString(), partitions);
            }
            out.put(broker.getKey().toString(), dirs);
        }
        return out;
    }

    private Object quorum() throws Exception {
        Method describe = admin.getClass().getMethod("describeMetadataQuorum");
        Object info = future(describe.invoke(admin), "quorumInfo");
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("leader", call(info, "leaderId"));
        out.put("leader_epoch", call(info, "leaderEpoch"));
        out.put("high_watermark", call(info, "highWatermark"));
        out.put("voters", replicaStates((List<?>) call(info, "voters")));
        out.put("observers", replicaStates((List<?>) call(info, "observers")));
        return out;
    }

    private static List<Object> replicaStates(List<?> states) throws Exception {
        List<Object> out = new ArrayList<>();
        for (Object s : states) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", call(s, "replicaId"));
            row.put("log_end_offset", call(s, "logEndOffset"));
            out.add(row);
        }
        return out;
    }

    private Object elect(JsonNode cmd) throws Exception {
        java.util.Set<TopicPartition> partitions = new java.util.HashSet<>();
        for (JsonNode p : cmd.get("partitions")) partitions.add(new TopicPartition(p.get(0).asText(), p.get(1).asInt()));
        ElectionType type = ElectionType.valueOf(cmd.get("type").asText().toUpperCase());
        Map<TopicPartition, java.util.Optional<Throwable>> result =
            admin.electLeaders(type, partitions).partitions().get(TIMEOUT_S, TimeUnit.SECONDS);
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, java.util.Optional<Throwable>> e : result.entrySet()) {
            out.put(e.getKey().toString(), e.getValue().map(t -> t.getClass().getSimpleName() + ": " + t.getMessage()).orElse(null));
        }
        return out;
    }

    /** A consumer of ``group`` reads ``count`` records of ``topic`` and commits (commitSync, with
     *  the leader epoch of the last record read, as clients from 2.1 do); its answer: what it read. */
    private Object consume(JsonNode cmd) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", cmd.get("group").asText());
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("max.poll.records", cmd.path("max_poll").asText("50"));
        props.put("key.deserializer", org.apache.kafka.common.serialization.StringDeserializer.class.getName());
        props.put("value.deserializer", org.apache.kafka.common.serialization.StringDeserializer.class.getName());
        props.putAll(strings(cmd.get("props")));
        int wanted = cmd.get("count").asInt();
        int read = 0;
        Map<String, Long> next = new TreeMap<>();
        try (org.apache.kafka.clients.consumer.KafkaConsumer<String, String> consumer =
                 new org.apache.kafka.clients.consumer.KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(cmd.get("topic").asText()));
            long deadline = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(TIMEOUT_S);
            while (read < wanted && System.currentTimeMillis() < deadline) {
                for (org.apache.kafka.clients.consumer.ConsumerRecord<String, String> r : consumer.poll(java.time.Duration.ofMillis(500))) {
                    if (read >= wanted) break;
                    read++;
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> commit = new HashMap<>();
                    commit.put(tp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(r.offset() + 1, r.leaderEpoch(), ""));
                    next.put(tp.toString(), r.offset() + 1);
                    if (read == wanted) consumer.commitSync(commit);
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("read", read);
        out.put("committed", next);
        return out;
    }

    /** Admin alterConsumerGroupOffsets: a commit with no leader epoch (the group must be empty). */
    private Object alterOffsets(JsonNode cmd) throws Exception {
        Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets = new HashMap<>();
        offsets.put(new TopicPartition(cmd.get("topic").asText(), cmd.get("partition").asInt()),
                    new org.apache.kafka.clients.consumer.OffsetAndMetadata(cmd.get("offset").asLong()));
        admin.alterConsumerGroupOffsets(cmd.get("group").asText(), offsets).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return cmd.get("group").asText();
    }

    /** Every consumer group: its state and type, and its committed offsets with their leader epochs. */
    private Object groups() throws Exception {
        Object listing = admin.getClass().getMethod("listConsumerGroups").invoke(admin);
        Collection<?> found = (Collection<?>) future(listing, "all");
        Map<String, Object> out = new TreeMap<>();
        for (Object g : found) {
            String id = (String) call(g, "groupId");
            Map<String, Object> row = new LinkedHashMap<>();
            Object state = call(g, "groupState");
            if (state == null) state = call(g, "state");
            if (state instanceof java.util.Optional) state = ((java.util.Optional<?>) state).map(Object::toString).orElse(null);
            row.put("state", state == null ? null : state.toString());
            Object type = call(g, "type");
            if (type instanceof java.util.Optional) type = ((java.util.Optional<?>) type).map(Object::toString).orElse(null);
            row.put("type", type == null ? null : type.toString());
            Map<String, Object> offsets = new TreeMap<>();
            Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(id).partitionsToOffsetAndMetadata().get(TIMEOUT_S, TimeUnit.SECONDS);
            for (Map.Entry<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> e : committed.entrySet()) {
                if (e.getValue() == null) continue;
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("offset", e.getValue().offset());
                o.put("leader_epoch", e.getValue().leaderEpoch().orElse(null));
                o.put("metadata", e.getValue().metadata());
                offsets.put(e.getKey().toString(), o);
            }
            row.put("offsets", offsets);
            out.put(id, row);
        }
        return out;
    }

    /** One transaction of ``transactional_id``: ``count`` records, then commit, abort, or none
     *  ("open": the producer is left inside it, as a client that died mid-transaction). */
    private Object txn(JsonNode cmd) throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode props = JSON.createObjectNode();
        props.put("transactional.id", cmd.get("transactional_id").asText());
        props.put("transaction.timeout.ms", cmd.path("timeout_ms").asText("600000"));
        com.fasterxml.jackson.databind.node.ObjectNode spec = JSON.createObjectNode();
        spec.put("acks", "all");
        spec.put("idempotence", "true");
        spec.set("props", props);
        KafkaProducer<String, String> producer = producer(spec);
        producer.initTransactions();
        producer.beginTransaction();
        Acks acks = new Acks();
        String topic = cmd.get("topic").asText();
        String prefix = cmd.path("prefix").asText(cmd.get("transactional_id").asText());
        int keys = cmd.path("keys").asInt(0);
        for (int i = 0; i < cmd.get("count").asInt(); i++) {
            acks.add(producer.send(new ProducerRecord<>(topic, 0, prefix + "-" + (keys > 0 ? i % keys : i), "v" + i))
                     .get(TIMEOUT_S, TimeUnit.SECONDS));
        }
        String end = cmd.get("end").asText();
        if (end.equals("commit")) producer.commitTransaction();
        else if (end.equals("abort")) producer.abortTransaction();
        if (end.equals("open")) abandoned.add(producer);
        else producer.close(java.time.Duration.ofSeconds(TIMEOUT_S));
        return acks.json();
    }

    /** listTransactions + describeTransactions, and describeProducers of the partitions named. */
    private Object transactions(JsonNode cmd) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        // Admin's transaction calls are 3.0+ (KIP-664): looked up by name so the driver builds on 2.8
        Collection<?> listed = (Collection<?>) future(admin.getClass().getMethod("listTransactions").invoke(admin), "all");
        List<String> ids = new ArrayList<>();
        for (Object t : listed) ids.add((String) call(t, "transactionalId"));
        Map<String, Object> described = new TreeMap<>();
        if (!ids.isEmpty()) {
            Map<?, ?> byId = (Map<?, ?>) future(
                admin.getClass().getMethod("describeTransactions", Collection.class).invoke(admin, ids), "all");
            for (Map.Entry<?, ?> e : byId.entrySet()) {
                Object d = e.getValue();
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("state", call(d, "state").toString());
                row.put("producer_id", call(d, "producerId"));
                row.put("producer_epoch", call(d, "producerEpoch"));
                row.put("timeout_ms", call(d, "transactionTimeoutMs"));
                List<String> parts = new ArrayList<>();
                for (Object tp : (Collection<?>) call(d, "topicPartitions")) parts.add(tp.toString());
                parts.sort(null);
                row.put("partitions", parts);
                described.put(e.getKey().toString(), row);
            }
        }
        out.put("transactions", described);
        List<TopicPartition> partitions = new ArrayList<>();
        for (JsonNode p : cmd.path("partitions")) partitions.add(new TopicPartition(p.get(0).asText(), p.get(1).asInt()));
        Map<String, Object> producers = new TreeMap<>();
        if (!partitions.isEmpty()) {
            Map<?, ?> byPartition = (Map<?, ?>) future(
                admin.getClass().getMethod("describeProducers", Collection.class).invoke(admin, partitions), "all");
            for (Map.Entry<?, ?> e : byPartition.entrySet()) {
                List<Object> rows = new ArrayList<>();
                for (Object st : (Collection<?>) call(e.getValue(), "activeProducers")) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("producer_id", call(st, "producerId"));
                    row.put("producer_epoch", call(st, "producerEpoch"));
                    row.put("last_sequence", call(st, "lastSequence"));
                    Object start = call(st, "currentTransactionStartOffset");
                    row.put("current_transaction_start_offset",
                            start instanceof java.util.OptionalLong && ((java.util.OptionalLong) start).isPresent()
                            ? ((java.util.OptionalLong) start).getAsLong() : null);
                    rows.add(row);
                }
                producers.put(e.getKey().toString(), rows);
            }
        }
        out.put("producers", producers);
        return out;
    }

    /** listPartitionReassignments: each reassignment in flight, its replicas and the ones moving. */
    private Object reassignments() throws Exception {
        Map<?, ?> found = (Map<?, ?>) future(admin.listPartitionReassignments(), "reassignments");
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<?, ?> e : found.entrySet()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("replicas", call(e.getValue(), "replicas"));
            row.put("adding", call(e.getValue(), "addingReplicas"));
            row.put("removing", call(e.getValue(), "removingReplicas"));
            out.put(e.getKey().toString(), row);
        }
        return out;
    }

    /** describeConfigs of the topics named and of every broker: the dynamic entries only (what an
     *  operator or a tool such as kafka-reassign-partitions --throttle set), by name. */
    private Object configs(JsonNode cmd) throws Exception {
        List<ConfigResource> resources = new ArrayList<>();
        for (JsonNode t : cmd.path("topics")) resources.add(new ConfigResource(ConfigResource.Type.TOPIC, t.asText()));
        for (JsonNode b : cmd.path("brokers")) resources.add(new ConfigResource(ConfigResource.Type.BROKER, b.asText()));
        Map<ConfigResource, org.apache.kafka.clients.admin.Config> described =
            admin.describeConfigs(resources).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        Map<String, Object> topics = new TreeMap<>();
        Map<String, Object> brokers = new TreeMap<>();
        for (Map.Entry<ConfigResource, org.apache.kafka.clients.admin.Config> e : described.entrySet()) {
            Map<String, String> entries = new TreeMap<>();
            for (ConfigEntry entry : e.getValue().entries()) {
                String source = entry.source().name();
                if (source.equals("DYNAMIC_TOPIC_CONFIG") || source.equals("DYNAMIC_BROKER_CONFIG")) {
                    entries.put(entry.name(), entry.value());
                }
            }
            (e.getKey().type() == ConfigResource.Type.TOPIC ? topics : brokers).put(e.getKey().name(), entries);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topics", topics);
        out.put("brokers", brokers);
        return out;
    }

    /** Admin deleteRecords (DeleteRecords: the log start offset moved to ``offset``); the low
     *  watermark the leader answered. */
    private Object deleteRecords(JsonNode cmd) throws Exception {
        TopicPartition tp = new TopicPartition(cmd.get("topic").asText(), cmd.get("partition").asInt());
        Map<TopicPartition, org.apache.kafka.clients.admin.RecordsToDelete> request =
            Map.of(tp, org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(cmd.get("offset").asLong()));
        org.apache.kafka.clients.admin.DeletedRecords done =
            admin.deleteRecords(request).lowWatermarks().get(tp).get(TIMEOUT_S, TimeUnit.SECONDS);
        return done.lowWatermark();
    }

    /** A KIP-932 share consumer (4.x, looked up by name) of ``group`` reads ``count`` records of
     *  ``topic`` and acknowledges them (implicit acknowledgement, commitSync); its answer: what it read. */
    private Object shareConsume(JsonNode cmd) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", cmd.get("group").asText());
        props.put("key.deserializer", org.apache.kafka.common.serialization.StringDeserializer.class.getName());
        props.put("value.deserializer", org.apache.kafka.common.serialization.StringDeserializer.class.getName());
        Class<?> type = Class.forName("org.apache.kafka.clients.consumer.KafkaShareConsumer");
        Object consumer = type.getConstructor(Properties.class).newInstance(props);
        int wanted = cmd.get("count").asInt();
        int read = 0;
        List<Long> offsets = new ArrayList<>();
        try {
            type.getMethod("subscribe", Collection.class).invoke(consumer, List.of(cmd.get("topic").asText()));
            Method poll = type.getMethod("poll", java.time.Duration.class);
            long deadline = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(TIMEOUT_S);
            while (read < wanted && System.currentTimeMillis() < deadline) {
                for (Object r : (Iterable<?>) poll.invoke(consumer, java.time.Duration.ofMillis(500))) {
                    read++;
                    offsets.add((Long) call(r, "offset"));
                }
                type.getMethod("commitSync").invoke(consumer);
            }
        } finally {
            type.getMethod("close").invoke(consumer);
        }
        offsets.sort(null);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("read", read);
        out.put("first", offsets.isEmpty() ? null : offsets.get(0));
        out.put("last", offsets.isEmpty() ? null : offsets.get(offsets.size() - 1));
        return out;
    }

    /** Every share group (4.x Admin: listGroups, describeShareGroups, listShareGroupOffsets): its
     *  state, group epoch, members and each partition's share-partition start offset. */
    private Object shareGroups() throws Exception {
        Map<String, Object> out = new TreeMap<>();
        Method listGroups;
        try {
            listGroups = admin.getClass().getMethod("listGroups");
        } catch (NoSuchMethodException e) {
            return out;   // before 4.0: no share groups
        }
        List<String> ids = new ArrayList<>();
        for (Object g : (Collection<?>) future(listGroups.invoke(admin), "all")) {
            Object type = call(g, "type");
            if (type instanceof java.util.Optional) type = ((java.util.Optional<?>) type).orElse(null);
            if (type != null && type.toString().equalsIgnoreCase("share")) ids.add((String) call(g, "groupId"));
        }
        if (ids.isEmpty()) return out;
        Map<?, ?> described = (Map<?, ?>) future(
            admin.getClass().getMethod("describeShareGroups", Collection.class).invoke(admin, ids), "all");
        Class<?> spec = Class.forName("org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec");
        Map<String, Object> specs = new HashMap<>();
        for (String id : ids) specs.put(id, spec.getConstructor().newInstance());
        Map<?, ?> offsets = (Map<?, ?>) future(
            admin.getClass().getMethod("listShareGroupOffsets", Map.class).invoke(admin, specs), "all");
        for (String id : ids) {
            Object d = described.get(id);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("state", call(d, "groupState").toString());
            row.put("group_epoch", call(d, "groupEpoch"));
            row.put("members", ((Collection<?>) call(d, "members")).size());
            Map<String, Object> starts = new TreeMap<>();
            Map<?, ?> byPartition = (Map<?, ?>) offsets.get(id);
            if (byPartition != null) {
                for (Map.Entry<?, ?> e : byPartition.entrySet()) {
                    if (e.getValue() == null) continue;
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("start_offset", call(e.getValue(), "startOffset"));
                    Object epoch = call(e.getValue(), "leaderEpoch");
                    o.put("leader_epoch", epoch instanceof java.util.Optional ? ((java.util.Optional<?>) epoch).orElse(null) : null);
                    starts.put(e.getKey().toString(), o);
                }
            }
            row.put("offsets", starts);
            out.put(id, row);
        }
        return out;
    }

    /** A Kafka Streams application of the release (``group``: its application id) in the KIP-1071
     *  streams rebalance protocol (group.protocol=streams, 4.1+): it counts the records of
     *  ``topic`` by key into a state store (a changelog topic the group coordinator creates) and
     *  writes the counts to ``output``. Left running; answered once it is RUNNING and its
     *  committed offsets reach the end of every partition of ``topic``. */
    private Object streamsStart(JsonNode cmd) throws Exception {
        String group = cmd.get("group").asText();
        String topic = cmd.get("topic").asText();
        Properties props = new Properties();
        props.put("application.id", group);
        props.put("bootstrap.servers", bootstrap);
        props.put("group.protocol", "streams");
        props.put("commit.interval.ms", "500");
        props.put("state.dir", java.nio.file.Files.createTempDirectory("kreplica-streams").toString());
        org.apache.kafka.streams.StreamsBuilder builder = new org.apache.kafka.streams.StreamsBuilder();
        org.apache.kafka.common.serialization.Serde<String> text = org.apache.kafka.common.serialization.Serdes.String();
        builder.stream(topic, org.apache.kafka.streams.kstream.Consumed.with(text, text))
            .groupByKey(org.apache.kafka.streams.kstream.Grouped.with(text, text))
            .count(org.apache.kafka.streams.kstream.Materialized.as("counts"))
            .toStream()
            .to(cmd.get("output").asText(), org.apache.kafka.streams.kstream.Produced.with(text, org.apache.kafka.common.serialization.Serdes.Long()));
        org.apache.kafka.streams.KafkaStreams app = new org.apache.kafka.streams.KafkaStreams(builder.build(), props);
        streams.put(group, app);
        app.start();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (TopicPartitionInfo p : admin.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS).get(topic).partitions()) {
            latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(latest).all().get(TIMEOUT_S, TimeUnit.SECONDS).forEach((tp, info) -> ends.put(tp, info.offset()));
        long deadline = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(3 * TIMEOUT_S);
        Map<String, Object> committed = Map.of();
        while (System.currentTimeMillis() < deadline) {
            committed = streamsOffsets(group);
            boolean done = app.state() == org.apache.kafka.streams.KafkaStreams.State.RUNNING;
            for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
                Object at = committed.get(e.getKey().toString());
                done &= at != null && ((Number) ((Map<?, ?>) at).get("offset")).longValue() == e.getValue();
            }
            if (done) {
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("state", app.state().toString());
                out.put("offsets", committed);
                return out;
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException("streams application " + group + " did not commit to the end of " + topic
                                        + " in time: state " + app.state() + ", committed " + committed);
    }

    /** Closes a streams application (its member leaves the group: KafkaStreams.close with leaveGroup). */
    private Object streamsStop(JsonNode cmd) throws Exception {
        org.apache.kafka.streams.KafkaStreams app = streams.remove(cmd.get("group").asText());
        if (app == null) return false;
        app.close(new org.apache.kafka.streams.KafkaStreams.CloseOptions().leaveGroup(true).timeout(java.time.Duration.ofSeconds(TIMEOUT_S)));
        return app.state().toString();
    }

    /** A streams group's committed offsets (4.1+ Admin listStreamsGroupOffsets), by partition. */
    private Map<String, Object> streamsOffsets(String group) throws Exception {
        Class<?> spec = Class.forName("org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec");
        Map<String, Object> specs = Map.of(group, spec.getConstructor().newInstance());
        Map<?, ?> all = (Map<?, ?>) future(admin.getClass().getMethod("listStreamsGroupOffsets", Map.class).invoke(admin, specs), "all");
        Map<String, Object> out = new TreeMap<>();
        Map<?, ?> byPartition = (Map<?, ?>) all.get(group);
        if (byPartition == null) return out;
        for (Map.Entry<?, ?> e : byPartition.entrySet()) {
            if (e.getValue() == null) continue;
            org.apache.kafka.clients.consumer.OffsetAndMetadata o = (org.apache.kafka.clients.consumer.OffsetAndMetadata) e.getValue();
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("offset", o.offset());
            row.put("leader_epoch", o.leaderEpoch().orElse(null));
            out.put(e.getKey().toString(), row);
        }
        return out;
    }

    /** Every streams group (4.1+ Admin: listGroups, describeStreamsGroups, listStreamsGroupOffsets):
     *  its state, group, target assignment and topology epochs, its subtopologies, each member's
     *  epoch and tasks (active, standby, warmup by subtopology) and its committed offsets. */
    private Object streamsGroups() throws Exception {
        Map<String, Object> out = new TreeMap<>();
        Method describe;
        try {
            describe = admin.getClass().getMethod("describeStreamsGroups", Collection.class);
        } catch (NoSuchMethodException e) {
            return out;   // before 4.1: no streams groups
        }
        List<String> ids = new ArrayList<>();
        for (Object g : (Collection<?>) future(admin.getClass().getMethod("listGroups").invoke(admin), "all")) {
            Object type = call(g, "type");
            if (type instanceof java.util.Optional) type = ((java.util.Optional<?>) type).orElse(null);
            if (type != null && type.toString().equalsIgnoreCase("streams")) ids.add((String) call(g, "groupId"));
        }
        if (ids.isEmpty()) return out;
        Map<?, ?> described = (Map<?, ?>) future(describe.invoke(admin, ids), "all");
        for (String id : ids) {
            Object d = described.get(id);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("state", call(d, "groupState").toString());
            row.put("group_epoch", call(d, "groupEpoch"));
            row.put("target_assignment_epoch", call(d, "targetAssignmentEpoch"));
            row.put("topology_epoch", call(d, "topologyEpoch"));
            Map<String, Object> subtopologies = new TreeMap<>();
            for (Object s : (Collection<?>) call(d, "subtopologies")) {
                Map<String, Object> sub = new LinkedHashMap<>();
                sub.put("source_topics", new java.util.TreeSet<>((Collection<?>) call(s, "sourceTopics")));
                sub.put("repartition_sink_topics", new java.util.TreeSet<>((Collection<?>) call(s, "repartitionSinkTopics")));
                sub.put("state_changelog_topics", new java.util.TreeSet<>(((Map<?, ?>) call(s, "stateChangelogTopics")).keySet()));
                sub.put("repartition_source_topics", new java.util.TreeSet<>(((Map<?, ?>) call(s, "repartitionSourceTopics")).keySet()));
                subtopologies.put((String) call(s, "subtopologyId"), sub);
            }
            row.put("subtopologies", subtopologies);
            Map<String, Object> members = new TreeMap<>();
            for (Object m : (Collection<?>) call(d, "members")) {
                Map<String, Object> member = new LinkedHashMap<>();
                member.put("member_epoch", call(m, "memberEpoch"));
                member.put("client_id", call(m, "clientId"));
                member.put("process_id", call(m, "processId"));
                member.put("topology_epoch", call(m, "topologyEpoch"));
                member.put("assignment", tasks(call(m, "assignment")));
                member.put("target_assignment", tasks(call(m, "targetAssignment")));
                members.put((String) call(m, "memberId"), member);
            }
            row.put("members", members);
            row.put("offsets", streamsOffsets(id));
            out.put(id, row);
        }
        return out;
    }

    /** A StreamsGroupMemberAssignment as {active|standby|warmup: {subtopology: [partitions]}}. */
    private static Map<String, Object> tasks(Object assignment) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String kind : List.of("active", "standby", "warmup")) {
            Map<String, Object> bySubtopology = new TreeMap<>();
            for (Object t : (Collection<?>) call(assignment, kind + "Tasks")) {
                List<Integer> partitions = new ArrayList<>((Collection<Integer>) call(t, "partitions"));
                partitions.sort(null);
                bySubtopology.put((String) call(t, "subtopologyId"), partitions);
            }
            out.put(kind, bySubtopology);
        }
        return out;
    }

    /** Admin unregisterBroker (KRaft, KIP-631): a decommissioned broker's registration removed. */
    private Object unregisterBroker(JsonNode cmd) throws Exception {
        Method unregister = admin.getClass().getMethod("unregisterBroker", int.class);
        future(unregister.invoke(admin, cmd.get("broker").asInt()), "all");
        return cmd.get("broker").asInt();
    }

    /** Sends count records and waits for every acknowledgement: the offsets Kafka acked. */
    private Object produce(JsonNode cmd) throws Exception {
        try (KafkaProducer<String, String> producer = producer(cmd)) {
            String topic = cmd.get("topic").asText();
            Integer partition = cmd.has("partition") ? cmd.get("partition").asInt() : null;
            String prefix = cmd.path("prefix").asText("r");
            List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
            // keys: K cycles K keys (prefix-0 .. prefix-(K-1)) for a compacted topic; tombstone:
            // null values, a delete of each key
            int keys = cmd.path("keys").asInt(0);
            boolean tombstone = cmd.path("tombstone").asBoolean(false);
            for (int i = 0; i < cmd.get("count").asInt(); i++) {
                String key = prefix + "-" + (keys > 0 ? i % keys : i);
                sent.add(producer.send(new ProducerRecord<>(topic, partition, key, tombstone ? null : prefix + "-value-" + i)));
            }
            Acks acks = new Acks();
            for (java.util.concurrent.Future<RecordMetadata> f : sent) {
                try {
                    acks.add(f.get(TIMEOUT_S, TimeUnit.SECONDS));
                } catch (java.util.concurrent.ExecutionException e) {
                    acks.fail(e.getCause());
                }
            }
            return acks.json();
        }
    }

    /** Starts a producer that writes until produce_stop: the acknowledgements of a write an incident cuts. */
    private Object produceStart(JsonNode cmd) {
        String name = cmd.path("name").asText("default");
        Background bg = new Background(producer(cmd), cmd.get("topic").asText(),
                                       cmd.has("partition") ? cmd.get("partition").asInt() : null,
                                       cmd.path("prefix").asText(name), cmd.path("interval_ms").asLong(5));
        background.put(name, bg);
        bg.thread.start();
        return name;
    }

    private Object produceStop(JsonNode cmd) throws Exception {
        Background bg = background.remove(cmd.path("name").asText("default"));
        bg.running.set(false);
        bg.thread.join(TimeUnit.SECONDS.toMillis(TIMEOUT_S));
        bg.producer.close(java.time.Duration.ofSeconds(TIMEOUT_S));
        return bg.acks.json();
    }

    private KafkaProducer<String, String> producer(JsonNode cmd) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, cmd.path("acks").asText("all"));
        props.put(ProducerConfig.LINGER_MS_CONFIG, cmd.path("linger_ms").asText("5"));
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(ProducerConfig.RETRIES_CONFIG, cmd.path("retries").asText("2147483647"));
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, cmd.path("idempotence").asText("false"));
        props.put("metadata.recovery.strategy", "rebootstrap");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.putAll(strings(cmd.get("props")));
        return new KafkaProducer<>(props);
    }

    /** The acknowledged offsets per partition, and the failures by exception. */
    private static final class Acks {
        final Map<Integer, List<Long>> offsets = new TreeMap<>();
        final Map<String, Integer> failures = new TreeMap<>();

        synchronized void add(RecordMetadata m) {
            offsets.computeIfAbsent(m.partition(), k -> new ArrayList<>()).add(m.offset());
        }

        synchronized void fail(Throwable e) {
            failures.merge(e.getClass().getSimpleName(), 1, Integer::sum);
        }

        synchronized Map<String, Object> json() {
            Map<String, Object> out = new LinkedHashMap<>();
            Map<String, Object> parts = new TreeMap<>();
            for (Map.Entry<Integer, List<Long>> e : offsets.entrySet()) {
                List<Long> sorted = new ArrayList<>(e.getValue());
                sorted.sort(null);
                parts.put(e.getKey().toString(), sorted);
            }
            out.put("acked", parts);
            out.put("failures", failures);
            return out;
        }
    }

    private static final class Background {
        final KafkaProducer<String, String> producer;
        final Acks acks = new Acks();
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicLong next = new AtomicLong();
        final Thread thread;

        Background(KafkaProducer<String, String> producer, String topic, Integer partition, String prefix, long intervalMs) {
            this.producer = producer;
            this.thread = new Thread(() -> {
                while (running.get()) {
                    long i = next.getAndIncrement();
                    producer.send(new ProducerRecord<>(topic, partition, prefix + "-" + i, prefix + "-value-" + i),
                                  (m, e) -> { if (e == null) acks.add(m); else acks.fail(e); });
                    try {
                        Thread.sleep(intervalMs);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "background-producer");
            this.thread.setDaemon(true);
        }
    }

    private static Map<String, String> strings(JsonNode node) {
        Map<String, String> out = new LinkedHashMap<>();
        if (node == null) return out;
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    private static List<Integer> ids(Collection<Node> nodes) {
        List<Integer> out = new ArrayList<>();
        for (Node n : nodes) out.add(n.id());
        return out;
    }

    /** The value of the first of the result's future-returning methods this release has. */
    private static Object future(Object result, String... names) throws Exception {
        for (String name : names) {
            try {
                Method m = result.getClass().getMethod(name);
                return ((org.apache.kafka.common.KafkaFuture<?>) m.invoke(result)).get(TIMEOUT_S, TimeUnit.SECONDS);
            } catch (NoSuchMethodException e) {
                // an older or newer release: the next name
            }
        }
        throw new NoSuchMethodException(String.join("|", names) + " on " + result.getClass().getName());
    }

    private static Object call(Object target, String name) throws Exception {
        try {
            Method m = target.getClass().getMethod(name);
            return m.invoke(target);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static Object field(Object target, String name) throws Exception {
        try {
            return target.getClass().getField(name).get(target);
        } catch (NoSuchFieldException e) {
            return null;
        }
    }

    private static Object number(Object target, String name) throws Exception {
        Object value = call(target, name);
        return value != null ? value : field(target, name);
    }
}
