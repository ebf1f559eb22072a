import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BinaryNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * Every record type Kafka keeps in its own topics (tiered storage's __remote_log_metadata included),
 * at every version its generated classes support,
 * written by Kafka's own serializers with every field set to a value other than its default: one
 * JSON line per (type, version) with the bytes as they lie on disk and the generated
 * JsonConverter's reading of the message, for test_record_coverage.py to hold kreplica against.
 *
 * The fields of a version are those of the generated class's SCHEMAS[version] (tagged ones
 * included), so a field is never set outside its versions; the message is built by the generated
 * JsonConverter from JSON named after the class's own fields. Reflection keeps one source
 * compiling against 3.9 (no coordinator record type enums) and 4.4 (control types moved).
 */
public final class RecordCoverage {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static int counter;

    private static final String[][] COORDINATORS = {
        {"group", "org.apache.kafka.coordinator.group.generated.CoordinatorRecordType",
         "org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde"},
        {"transaction", "org.apache.kafka.coordinator.transaction.generated.CoordinatorRecordType",
         "org.apache.kafka.coordinator.transaction.TransactionCoordinatorRecordSerde"},
        {"share", "org.apache.kafka.coordinator.share.generated.CoordinatorRecordType",
         "org.apache.kafka.coordinator.share.ShareCoordinatorRecordSerde"},
    };

    /** Raft control record types and their messages (ControlRecordUtils); the markers are not messages. */
    private static final Map<String, String> CONTROL_MESSAGES = Map.of(
        "LEADER_CHANGE", "LeaderChangeMessage", "SNAPSHOT_HEADER", "SnapshotHeaderRecord",
        "SNAPSHOT_FOOTER", "SnapshotFooterRecord", "KRAFT_VERSION", "KRaftVersionRecord",
        "KRAFT_VOTERS", "VotersRecord");

    public static void main(String[] args) throws Exception {
        for (MetadataRecordType type : MetadataRecordType.values()) {
            ApiMessage message = type.newMetadataRecord();
            for (short v = message.lowestSupportedVersion(); v <= message.highestSupportedVersion(); v++) {
                ObjectNode line = line("metadata", type.id(), message.getClass().getSimpleName(), v);
                try {
                    ApiMessage filled = (ApiMessage) build(message.getClass(), v);
                    ApiMessageAndVersion record = new ApiMessageAndVersion(filled, v);
                    ObjectSerializationCache cache = new ObjectSerializationCache();
                    ByteBufferAccessor out = new ByteBufferAccessor(
                        ByteBuffer.allocate(MetadataRecordSerde.INSTANCE.recordSize(record, cache)));
                    MetadataRecordSerde.INSTANCE.write(record, cache, out);
                    line.put("hex", HexFormat.of().formatHex(out.buffer().array()));
                    line.set("json", toJson(filled, v));
                } catch (Exception e) {
                    line.put("error", e.toString());
                }
                emit(line);
            }
        }
        control();
        for (String[] coordinator : COORDINATORS) {
            coordinator(coordinator[0], coordinator[1], coordinator[2]);
        }
        remote();
    }

    /**
     * Tiered storage's __remote_log_metadata records (kafka-storage's own MetadataRecordType), written by
     * BytesApiMessageSerde as RemoteLogMetadataSerde frames them and read back by it: bytes Kafka's
     * deserializer does not give back equal are an error.
     */
    private static void remote() throws Exception {
        Class<?> types = Class.forName("org.apache.kafka.server.log.remote.metadata.storage.generated.MetadataRecordType");
        Method fromId = types.getMethod("fromId", short.class);
        Method newRecord = types.getMethod("newMetadataRecord");
        org.apache.kafka.server.common.serialization.BytesApiMessageSerde serde =
            new org.apache.kafka.server.common.serialization.BytesApiMessageSerde() {
                @Override
                public ApiMessage apiMessageFor(short apiKey) {
                    try {
                        return (ApiMessage) newRecord.invoke(fromId.invoke(null, apiKey));
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalArgumentException(e);
                    }
                }
            };
        for (Object type : types.getEnumConstants()) {
            ApiMessage message = (ApiMessage) newRecord.invoke(type);
            for (short v = message.lowestSupportedVersion(); v <= message.highestSupportedVersion(); v++) {
                ObjectNode line = line("remote", (short) types.getMethod("id").invoke(type),
                                       message.getClass().getSimpleName(), v);
                try {
                    ApiMessage filled = (ApiMessage) build(message.getClass(), v);
                    byte[] bytes = serde.serialize(new ApiMessageAndVersion(filled, v));
                    ApiMessageAndVersion back = serde.deserialize(bytes);
                    if (!back.message().equals(filled) || back.version() != v) {
                        throw new IllegalStateException("BytesApiMessageSerde reads back " + back);
                    }
                    line.put("hex", HexFormat.of().formatHex(bytes));
                    line.set("json", toJson(filled, v));
                } catch (Exception e) {
                    line.put("error", e.toString());
                }
                emit(line);
            }
        }
    }

    private static void control() throws Exception {
        Class<?> types = firstClass("org.apache.kafka.common.record.internal.ControlRecordType",
                                    "org.apache.kafka.common.record.ControlRecordType");
        for (Object type : types.getEnumConstants()) {
            String name = ((Enum<?>) type).name();
            short id = (short) types.getMethod("type").invoke(type);
            if (name.equals("ABORT") || name.equals("COMMIT") || id < 0) {
                continue;    // transaction markers (EndTxnMarker's own format) and UNKNOWN
            }
            String messageName = CONTROL_MESSAGES.get(name);
            if (messageName == null) {
                ObjectNode line = line("control", id, name, (short) -1);
                line.put("error", "a control record type RecordCoverage does not map to a message");
                emit(line);
                continue;
            }
            Class<?> cls = Class.forName("org.apache.kafka.common.message." + messageName);
            Message message = (Message) cls.getConstructor().newInstance();
            for (short v = message.lowestSupportedVersion(); v <= message.highestSupportedVersion(); v++) {
                ObjectNode line = line("control", id, messageName, v);
                try {
                    Message filled = build(cls, v);
                    line.put("hex", HexFormat.of().formatHex(bytes(filled, v)));
                    line.set("json", toJson(filled, v));
                } catch (Exception e) {
                    line.put("error", e.toString());
                }
                emit(line);
            }
        }
    }

    /** One coordinator's records: key at version 0, value at each version, by its own serde. */
    private static void coordinator(String topic, String enumName, String serdeName) throws Exception {
        Class<?> types;
        try {
            types = Class.forName(enumName);
        } catch (ClassNotFoundException e) {
            legacyCoordinator(topic);    // before 4.0 the coordinators had no record type enum
            return;
        }
        Object serde = Class.forName(serdeName).getConstructor().newInstance();
        Class<?> recordClass = Class.forName("org.apache.kafka.coordinator.common.runtime.CoordinatorRecord");
        Method record = recordClass.getMethod("record", ApiMessage.class, ApiMessageAndVersion.class);
        Method serializeKey = serde.getClass().getMethod("serializeKey", recordClass);
        Method serializeValue = serde.getClass().getMethod("serializeValue", recordClass);
        for (Object type : types.getEnumConstants()) {
            short id = (short) types.getMethod("id").invoke(type);
            ApiMessage key = (ApiMessage) types.getMethod("newRecordKey").invoke(type);
            ApiMessage value = (ApiMessage) types.getMethod("newRecordValue").invoke(type);
            for (short v = value.lowestSupportedVersion(); v <= value.highestSupportedVersion(); v++) {
                ObjectNode line = line("coordinator", id, value.getClass().getSimpleName(), v);
                line.put("topic", topic);
                try {
                    ApiMessage filledKey = (ApiMessage) build(key.getClass(), (short) 0);
                    ApiMessage filledValue = (ApiMessage) build(value.getClass(), v);
                    Object both = record.invoke(null, filledKey, new ApiMessageAndVersion(filledValue, v));
                    line.put("key_hex", HexFormat.of().formatHex((byte[]) serializeKey.invoke(serde, both)));
                    line.put("value_hex", HexFormat.of().formatHex((byte[]) serializeValue.invoke(serde, both)));
                    line.set("key_json", toJson(filledKey, (short) 0));
                    line.set("json", toJson(filledValue, v));
                } catch (Exception e) {
                    line.put("error", String.valueOf(e.getCause() != null ? e.getCause() : e));
                }
                emit(line);
            }
        }
    }

    /**
     * 3.x: the group coordinator's serde maps a key version (the record type) to its key and value
     * classes in a private switch; the transaction log is one type. Keys are written at the key
     * version, as 3.x's serde writes them (MessageUtil.toVersionPrefixedBytes).
     */
    private static void legacyCoordinator(String topic) throws Exception {
        Map<Short, ApiMessage[]> types = new java.util.TreeMap<>();
        if (topic.equals("group")) {
            Class<?> serde = Class.forName("org.apache.kafka.coordinator.group.CoordinatorRecordSerde");
            Object instance = serde.getConstructor().newInstance();
            Method keyFor = serde.getDeclaredMethod("apiMessageKeyFor", short.class);
            Method valueFor = serde.getDeclaredMethod("apiMessageValueFor", short.class);
            keyFor.setAccessible(true);
            valueFor.setAccessible(true);
            for (short id = 0; id < 64; id++) {
                try {
                    types.put(id, new ApiMessage[] {(ApiMessage) keyFor.invoke(instance, id),
                                                    (ApiMessage) valueFor.invoke(instance, id)});
                } catch (java.lang.reflect.InvocationTargetException unknown) {
                    // not a record type of this release
                }
            }
        } else if (topic.equals("transaction")) {
            String generated = "org.apache.kafka.coordinator.transaction.generated.";
            types.put((short) 0, new ApiMessage[] {
                (ApiMessage) Class.forName(generated + "TransactionLogKey").getConstructor().newInstance(),
                (ApiMessage) Class.forName(generated + "TransactionLogValue").getConstructor().newInstance()});
        }
        for (Map.Entry<Short, ApiMessage[]> type : types.entrySet()) {
            short id = type.getKey();
            ApiMessage key = type.getValue()[0];
            ApiMessage value = type.getValue()[1];
            short keyVersion = (short) Math.max(id, key.lowestSupportedVersion());
            keyVersion = (short) Math.min(keyVersion, key.highestSupportedVersion());
            for (short v = value.lowestSupportedVersion(); v <= value.highestSupportedVersion(); v++) {
                ObjectNode line = line("coordinator", id, value.getClass().getSimpleName(), v);
                line.put("topic", topic);
                try {
                    Message filledKey = build(key.getClass(), keyVersion);
                    Message filledValue = build(value.getClass(), v);
                    line.put("key_hex", HexFormat.of().formatHex(prefixed(id, filledKey, keyVersion)));
                    line.put("value_hex", HexFormat.of().formatHex(prefixed(v, filledValue, v)));
                    line.set("key_json", toJson(filledKey, keyVersion));
                    line.set("json", toJson(filledValue, v));
                } catch (Exception e) {
                    line.put("error", String.valueOf(e.getCause() != null ? e.getCause() : e));
                }
                emit(line);
            }
        }
    }

    /** An int16 then the message at {@code version}: 3.x's toVersionPrefixedBytes. */
    private static byte[] prefixed(short prefix, Message message, short version) {
        byte[] body = bytes(message, version);
        return ByteBuffer.allocate(2 + body.length).putShort(prefix).put(body).array();
    }

    private static ObjectNode line(String family, short type, String name, short version) {
        ObjectNode line = NODES.objectNode();
        line.put("family", family);
        line.put("type", type);
        line.put("name", name);
        line.put("version", version);
        return line;
    }

    private static void emit(ObjectNode line) throws Exception {
        System.out.println(JSON.writeValueAsString(line));
    }

    private static Class<?> firstClass(String... names) throws ClassNotFoundException {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // the next spelling
            }
        }
        throw new ClassNotFoundException(String.join(" or ", names));
    }

    private static byte[] bytes(Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBufferAccessor out = new ByteBufferAccessor(ByteBuffer.allocate(message.size(cache, version)));
        message.write(out, cache, version);
        return out.buffer().array();
    }

    private static Method converter(Class<?> cls, String name, Class<?>... parameters) throws Exception {
        return Class.forName(cls.getName() + "JsonConverter").getMethod(name, parameters);
    }

    private static JsonNode toJson(Message message, short version) throws Exception {
        return (JsonNode) converter(message.getClass(), "write", message.getClass(), short.class)
            .invoke(null, message, version);
    }

    /** The generated message of class {@code cls} at {@code version}, every field non-default. */
    private static Message build(Class<?> cls, short version) throws Exception {
        Schema schema = ((Schema[]) cls.getField("SCHEMAS").get(null))[version];
        if (schema == null) {
            throw new IllegalStateException(cls.getSimpleName() + " has no schema at version " + version);
        }
        return (Message) converter(cls, "read", JsonNode.class, short.class).invoke(null, fill(cls, schema), version);
    }

    /** JSON for one struct: each field of {@code schema}, named as the generated class names it. */
    private static ObjectNode fill(Class<?> cls, Schema schema) throws Exception {
        Object defaults = cls.getConstructor().newInstance();
        Map<String, java.lang.reflect.Field> fields = new HashMap<>();
        for (java.lang.reflect.Field field : cls.getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers()) && !field.getName().startsWith("_")) {
                fields.put(normalized(field.getName()), field);
            }
        }
        ObjectNode node = NODES.objectNode();
        for (BoundField bound : schema.fields()) {
            if (bound.def.type instanceof TaggedFields) {
                for (Field tagged : taggedFields((TaggedFields) bound.def.type)) {
                    put(node, tagged, fields, defaults);
                }
            } else {
                put(node, bound.def, fields, defaults);
            }
        }
        return node;
    }

    /** A tagged-fields section's fields (its private map: 3.9 has no accessor), in tag order. */
    @SuppressWarnings("unchecked")
    private static Iterable<Field> taggedFields(TaggedFields section) throws Exception {
        java.lang.reflect.Field map = TaggedFields.class.getDeclaredField("fields");
        map.setAccessible(true);
        return ((Map<Integer, Field>) map.get(section)).values();
    }

    private static void put(ObjectNode node, Field field, Map<String, java.lang.reflect.Field> fields,
                            Object defaults) throws Exception {
        java.lang.reflect.Field java = fields.get(normalized(field.name));
        if (java == null) {
            throw new IllegalStateException("no Java field for schema field " + field.name);
        }
        java.setAccessible(true);
        node.set(java.getName(), value(field.type, java.getGenericType(), java.get(defaults)));
    }

    private static String normalized(String name) {
        return name.replace("_", "").toLowerCase();
    }

    /** A value of {@code type} other than {@code dflt}; arrays get two elements. */
    private static JsonNode value(Type type, java.lang.reflect.Type javaType, Object dflt) throws Exception {
        if (type instanceof Schema) {
            return fill((Class<?>) javaType, (Schema) type);
        }
        if (type.arrayElementType().isPresent()) {
            Type element = type.arrayElementType().get();
            java.lang.reflect.Type elementType = elementType(javaType);
            ArrayNode array = NODES.arrayNode();
            array.add(value(element, elementType, null));
            array.add(value(element, elementType, null));
            return array;
        }
        int n = ++counter;
        if (type == Type.BOOLEAN) {
            return NODES.booleanNode(!Boolean.TRUE.equals(dflt));
        }
        if (type == Type.INT8) {
            return NODES.numberNode(other((byte) (1 + n % 100), dflt));
        }
        if (type == Type.INT16) {
            return NODES.numberNode(other((short) (1 + n % 30000), dflt));
        }
        if (type == Type.UINT16) {
            return NODES.numberNode(other(1 + n % 60000, dflt));
        }
        if (type == Type.INT32) {
            return NODES.numberNode(other(100 + n, dflt));
        }
        if (type == Type.UNSIGNED_INT32 || type == Type.INT64) {
            return NODES.numberNode(other(1_000_000_000_000L + n, dflt));
        }
        if (type == Type.FLOAT64) {
            return NODES.numberNode(n + 0.5);
        }
        if (type == Type.UUID) {
            return NODES.textNode(new Uuid(0x0102030405060708L + n, 0x1112131415161718L * n).toString());
        }
        if (type == Type.STRING || type == Type.NULLABLE_STRING || type == Type.COMPACT_STRING
                || type == Type.COMPACT_NULLABLE_STRING) {
            return NODES.textNode("s" + n + "\u00e9");
        }
        if (type == Type.BYTES || type == Type.NULLABLE_BYTES || type == Type.COMPACT_BYTES
                || type == Type.COMPACT_NULLABLE_BYTES) {
            return new BinaryNode(new byte[] {(byte) n, (byte) 0xff, 0});
        }
        throw new IllegalStateException("no value for schema type " + type);
    }

    /** {@code candidate}, or the next number where it is the field's default. */
    private static long other(Number candidate, Object dflt) {
        boolean same = dflt instanceof Number && ((Number) dflt).longValue() == candidate.longValue();
        return candidate.longValue() + (same ? 1 : 0);
    }

    /** The element type of a List<T> or of a generated collection (ImplicitLinkedHashMultiCollection<T>). */
    private static java.lang.reflect.Type elementType(java.lang.reflect.Type javaType) {
        java.lang.reflect.Type current = javaType;
        while (!(current instanceof ParameterizedType)) {
            current = ((Class<?>) current).getGenericSuperclass();
            if (current == null) {
                throw new IllegalStateException("no element type in " + javaType);
            }
        }
        return ((ParameterizedType) current).getActualTypeArguments()[0];
    }

    private RecordCoverage() {
    }
}
