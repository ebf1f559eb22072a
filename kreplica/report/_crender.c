/*
 * The compiled path of kreplica.report.inspect_log's ndjson lines, for ordinary values only.
 *
 * render_records(records, path_json, payload, header_prefixes, header_prefix) -> bytes | None
 *     The ndjson lines of a run of records (one batch's), as UTF-8 bytes, byte for byte what
 *     inspect_log.record_lines writes: `path_json` is the path's JSON literal, `payload` one of
 *     PAYLOAD_NONE, PAYLOAD_BASE64 (standard alphabet, padded) or PAYLOAD_HEX (lower case);
 *     `header_prefixes` maps a header key to its `{"key":<JSON>,"value":` bytes, and
 *     `header_prefix(key)` makes (and caches) one for a key not in it -- header keys are escaped
 *     by the Python code only.
 *
 * render_batch(batch, path_json, codec_json, timestamp_types) -> bytes | None
 *     The ndjson line of a batch, byte for byte what inspect_log.batch_line writes:
 *     `codec_json` holds the JSON text of codec ids 0..n-1 (others are written as numbers),
 *     `timestamp_types` the names of timestamp types -1, 0 and 1 (others are create_time).
 *
 * Both return None, having written nothing, for anything they were not written for: a control
 * record, a payload that is not `bytes`, an int beyond 64 bits, a field of an unexpected type.
 * The caller then renders with the pure-Python code, which is the reference (and handles the
 * utf8 payload mode, json and msgpack). tests/report/schemas/test_crender.py checks both agree.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Bumped whenever a signature or contract changes; inspect_log checks it, so a stale build is
 * not used (and KREPLICA_REQUIRE_COMPILED=1 makes the tests say so). */
#define API_VERSION 1

enum { PAYLOAD_NONE = 0, PAYLOAD_BASE64 = 1, PAYLOAD_HEX = 2 };

#define INT_CHARS 20 /* "-9223372036854775808" */

static const char B64_ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static char b64_pairs[4096][2]; /* 12 bits -> two characters */
static char hex_pairs[256][2];
static char digit_pairs[100][2];

static void init_tables(void) {
    for (int i = 0; i < 4096; i++) {
        b64_pairs[i][0] = B64_ALPHABET[i >> 6];
        b64_pairs[i][1] = B64_ALPHABET[i & 63];
    }
    for (int i = 0; i < 256; i++) {
        hex_pairs[i][0] = "0123456789abcdef"[i >> 4];
        hex_pairs[i][1] = "0123456789abcdef"[i & 15];
    }
    for (int i = 0; i < 100; i++) {
        digit_pairs[i][0] = (char)('0' + i / 10);
        digit_pairs[i][1] = (char)('0' + i % 10);
    }
}

static inline char *put(char *o, const char *s, size_t n) {
    memcpy(o, s, n);
    return o + n;
}

#define PUT_LITERAL(o, s) put((o), (s), sizeof(s) - 1)

/* Decimal, as Python's %d / str(int) writes it. */
static char *put_int(char *o, long long value) {
    char tmp[INT_CHARS];
    char *t = tmp + INT_CHARS;
    unsigned long long u;
    if (value < 0) {
        *o++ = '-';
        u = 0ULL - (unsigned long long)value;
    } else {
        u = (unsigned long long)value;
    }
    while (u >= 100) {
        t -= 2;
        memcpy(t, digit_pairs[u % 100], 2);
        u /= 100;
    }
    if (u >= 10) {
        t -= 2;
        memcpy(t, digit_pairs[u], 2);
    } else {
        *--t = (char)('0' + u);
    }
    return put(o, t, (size_t)(tmp + INT_CHARS - t));
}

/* How many characters put_int writes for value. */
static Py_ssize_t int_len(long long value) {
    unsigned long long u = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    Py_ssize_t n = 1 + (value < 0);
    for (unsigned long long p = 10; u >= p; p *= 10) {
        n++;
        if (p > 1000000000000000000ULL) /* 10^19 would overflow: u has 20 digits */
            break;
    }
    return n;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_PATH 1

/* Base64 with AVX2, 24 input bytes to 32 characters a round: Wojciech Mula's method as written in
 * aklomp/base64 (lib/arch/avx2: enc_reshuffle.c, enc_translate.c, enc_loop.c), BSD-2-Clause.
 * Returns how many input bytes it consumed (a multiple of 3); the scalar loop does the rest. */
__attribute__((target("avx2"))) static inline __m256i enc_reshuffle(const __m256i input) {
    /* input (shifted by 4 bytes so each 128-bit lane holds its 12 bytes): regroup 3 bytes into
     * 4 x 6 bits, one per output byte */
    const __m256i in = _mm256_shuffle_epi8(input, _mm256_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1,
                                                                  14, 15, 13, 14, 11, 12, 10, 11, 8, 9, 7, 8, 5, 6,
                                                                  4, 5));
    const __m256i t0 = _mm256_and_si256(in, _mm256_set1_epi32(0x0FC0FC00));
    const __m256i t1 = _mm256_mulhi_epu16(t0, _mm256_set1_epi32(0x04000040));
    const __m256i t2 = _mm256_and_si256(in, _mm256_set1_epi32(0x003F03F0));
    const __m256i t3 = _mm256_mullo_epi16(t2, _mm256_set1_epi32(0x01000010));
    return _mm256_or_si256(t1, t3);
}

__attribute__((target("avx2"))) static inline __m256i enc_translate(const __m256i in) {
    /* 0..25 -> 'A'.. (+65), 26..51 -> 'a'.. (+71), 52..61 -> '0'.. (-4), 62 -> '+' (-19), 63 -> '/' (-16) */
    const __m256i lut = _mm256_setr_epi8(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0, 65, 71, -4,
                                         -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0);
    __m256i indices = _mm256_subs_epu8(in, _mm256_set1_epi8(51));
    const __m256i mask = _mm256_cmpgt_epi8(in, _mm256_set1_epi8(25));
    indices = _mm256_sub_epi8(indices, mask);
    return _mm256_add_epi8(in, _mm256_shuffle_epi8(lut, indices));
}

__attribute__((target("avx2"))) static Py_ssize_t base64_avx2(char **out, const unsigned char *s, Py_ssize_t n) {
    if (n < 32)
        return 0;
    /* every load reads 32 bytes from 4 before the round's input, so keep 4 bytes after the last */
    Py_ssize_t rounds = (n - 4) / 24;
    char *o = *out;
    __m256i v = _mm256_loadu_si256((const __m256i *)s); /* the first load cannot start before s */
    v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6));
    _mm256_storeu_si256((__m256i *)o, enc_translate(enc_reshuffle(v)));
    const unsigned char *p = s + 20;
    o += 32;
    for (Py_ssize_t r = 1; r < rounds; r++) {
        v = _mm256_loadu_si256((const __m256i *)p);
        _mm256_storeu_si256((__m256i *)o, enc_translate(enc_reshuffle(v)));
        p += 24;
        o += 32;
    }
    *out = o;
    return rounds * 24;
}
#endif

/* 1 when put_base64 may use AVX2 (the CPU has it); tests switch it off to check the scalar loop */
static int use_avx2 = 0;

static char *put_base64(char *o, const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
#ifdef HAVE_AVX2_PATH
    if (use_avx2)
        i = base64_avx2(&o, s, n);
#endif
    for (; i + 6 <= n; i += 6) {
        uint32_t a = ((uint32_t)s[i] << 16) | ((uint32_t)s[i + 1] << 8) | s[i + 2];
        uint32_t b = ((uint32_t)s[i + 3] << 16) | ((uint32_t)s[i + 4] << 8) | s[i + 5];
        memcpy(o, b64_pairs[a >> 12], 2);
        memcpy(o + 2, b64_pairs[a & 0xFFF], 2);
        memcpy(o + 4, b64_pairs[b >> 12], 2);
        memcpy(o + 6, b64_pairs[b & 0xFFF], 2);
        o += 8;
    }
    for (; i + 3 <= n; i += 3) {
        uint32_t a = ((uint32_t)s[i] << 16) | ((uint32_t)s[i + 1] << 8) | s[i + 2];
        memcpy(o, b64_pairs[a >> 12], 2);
        memcpy(o + 2, b64_pairs[a & 0xFFF], 2);
        o += 4;
    }
    if (n - i == 1) {
        o[0] = B64_ALPHABET[s[i] >> 2];
        o[1] = B64_ALPHABET[(s[i] & 0x03) << 4];
        o[2] = o[3] = '=';
        o += 4;
    } else if (n - i == 2) {
        o[0] = B64_ALPHABET[s[i] >> 2];
        o[1] = B64_ALPHABET[((s[i] & 0x03) << 4) | (s[i + 1] >> 4)];
        o[2] = B64_ALPHABET[(s[i + 1] & 0x0F) << 2];
        o[3] = '=';
        o += 4;
    }
    return o;
}

static char *put_hex(char *o, const unsigned char *s, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        memcpy(o, hex_pairs[s[i]], 2);
        o += 2;
    }
    return o;
}

/* The length of a payload's JSON literal; -1 if it is neither bytes nor None. */
static Py_ssize_t payload_bound(PyObject *p, int mode) {
    if (p == Py_None || mode == PAYLOAD_NONE)
        return p == Py_None || PyBytes_CheckExact(p) ? 4 : -1;
    if (!PyBytes_CheckExact(p))
        return -1;
    Py_ssize_t n = PyBytes_GET_SIZE(p);
    return 2 + (mode == PAYLOAD_BASE64 ? (n + 2) / 3 * 4 : 2 * n);
}

static char *put_payload(char *o, PyObject *p, int mode) {
    if (p == Py_None || mode == PAYLOAD_NONE)
        return PUT_LITERAL(o, "null");
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(p);
    Py_ssize_t n = PyBytes_GET_SIZE(p);
    *o++ = '"';
    o = mode == PAYLOAD_BASE64 ? put_base64(o, s, n) : put_hex(o, s, n);
    *o++ = '"';
    return o;
}

/* A 64-bit int field, or 0 with *ok cleared (not an int, or too big: the reference writes it). */
static long long int_field(PyObject *v, int *ok) {
    if (!PyLong_Check(v)) {
        *ok = 0;
        return 0;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        *ok = 0;
    }
    return x;
}

/* A header key's `{"key":...,"value":` bytes (borrowed from the cache, or new from
 * header_prefix: *owned says which), or NULL with an exception set, or NULL and no exception for
 * a value the reference must write. */
static PyObject *header_prefix_of(PyObject *key, PyObject *prefixes, PyObject *make, int *owned) {
    *owned = 0;
    if (!PyUnicode_CheckExact(key))
        return NULL;
    PyObject *prefix = PyDict_GetItemWithError(prefixes, key);
    if (prefix == NULL) {
        if (PyErr_Occurred())
            return NULL;
        prefix = PyObject_CallOneArg(make, key);
        if (prefix == NULL)
            return NULL;
        *owned = 1;
    }
    if (!PyBytes_CheckExact(prefix)) {
        if (*owned)
            Py_DECREF(prefix);
        *owned = 0;
        return NULL;
    }
    return prefix;
}

static const char R_HEAD[] = "{\"type\":\"record\",\"path\":";
static const char R_POSITION[] = ",\"batch_position\":";
static const char R_OFFSET[] = ",\"offset\":";
static const char R_TIMESTAMP[] = ",\"timestamp\":";
static const char R_SEQUENCE[] = ",\"sequence\":";
static const char R_KEY[] = ",\"key\":";
static const char R_VALUE[] = ",\"value\":";
static const char R_HEADERS[] = ",\"headers\":[";
static const char R_TAIL[] = "],\"control_type\":null,\"coordinator_epoch\":null}\n";
#define R_FIXED                                                                                                  \
    (sizeof(R_HEAD) + sizeof(R_POSITION) + sizeof(R_OFFSET) + sizeof(R_TIMESTAMP) + sizeof(R_SEQUENCE) +       \
     sizeof(R_KEY) + sizeof(R_VALUE) + sizeof(R_HEADERS) + sizeof(R_TAIL) - 9)

/* Record fields (kreplica.formats.log.batch.Record). */
enum { F_POSITION, F_OFFSET, F_TIMESTAMP, F_SEQUENCE, F_KEY, F_VALUE, F_HEADERS, F_CONTROL, F_COORDINATOR, F_COUNT };

static PyObject *render(PyObject *seq, PyObject *path, int mode, PyObject *prefixes, PyObject *make);

static PyObject *render_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "render_records(records, path_json, payload, header_prefixes, header_prefix)");
        return NULL;
    }
    PyObject *records = args[0], *path = args[1], *prefixes = args[3], *make = args[4];
    int mode = PyLong_AsLong(args[2]);
    if (mode == -1 && PyErr_Occurred())
        return NULL;
    if (mode < PAYLOAD_NONE || mode > PAYLOAD_HEX) {
        PyErr_SetString(PyExc_ValueError, "payload must be PAYLOAD_NONE, PAYLOAD_BASE64 or PAYLOAD_HEX");
        return NULL;
    }
    if (!PyBytes_Check(path) || !PyDict_Check(prefixes) || !PyCallable_Check(make)) {
        PyErr_SetString(PyExc_TypeError, "path_json must be bytes, header_prefixes a dict, header_prefix callable");
        return NULL;
    }
    PyObject *seq; /* a tuple, so header_prefix (Python code) cannot change what is being read */
    if (PyTuple_Check(records))
        seq = Py_NewRef(records);
    else if (PyList_Check(records))
        seq = PyList_AsTuple(records);
    else
        Py_RETURN_NONE;
    if (seq == NULL)
        return NULL;
    PyObject *result = render(seq, path, mode, prefixes, make);
    Py_DECREF(seq);
    return result;
}

static PyObject *render(PyObject *seq, PyObject *path, int mode, PyObject *prefixes, PyObject *make) {
    Py_ssize_t count = PyTuple_GET_SIZE(seq);
    PyObject **items = &PyTuple_GET_ITEM(seq, 0);
    Py_ssize_t path_len = PyBytes_GET_SIZE(path);
    const char *path_text = PyBytes_AS_STRING(path);

    /* Pass 1: check every field and compute the exact size; nothing is written if the reference must.
     * The header prefixes are kept in `used`, in order, so pass 2 writes exactly what was bounded. */
    Py_ssize_t bound = 0; /* the exact size */
    PyObject *used = NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *r = items[i];
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != F_COUNT)
            goto fallback;
        if (PyTuple_GET_ITEM(r, F_CONTROL) != Py_None || PyTuple_GET_ITEM(r, F_COORDINATOR) != Py_None)
            goto fallback;
        int ok = 1;
        for (int f = F_POSITION; f <= F_SEQUENCE; f++)
            bound += int_len(int_field(PyTuple_GET_ITEM(r, f), &ok));
        Py_ssize_t kb = payload_bound(PyTuple_GET_ITEM(r, F_KEY), mode);
        Py_ssize_t vb = payload_bound(PyTuple_GET_ITEM(r, F_VALUE), mode);
        if (!ok || kb < 0 || vb < 0)
            goto fallback;
        bound += (Py_ssize_t)R_FIXED + path_len + kb + vb;
        PyObject *headers = PyTuple_GET_ITEM(r, F_HEADERS);
        if (!PyTuple_Check(headers))
            goto fallback;
        Py_ssize_t nh = PyTuple_GET_SIZE(headers);
        for (Py_ssize_t h = 0; h < nh; h++) {
            PyObject *header = PyTuple_GET_ITEM(headers, h);
            if (!PyTuple_Check(header) || PyTuple_GET_SIZE(header) != 2)
                goto fallback;
            Py_ssize_t hb = payload_bound(PyTuple_GET_ITEM(header, 1), mode);
            if (hb < 0)
                goto fallback;
            int owned;
            PyObject *prefix = header_prefix_of(PyTuple_GET_ITEM(header, 0), prefixes, make, &owned);
            if (prefix == NULL) {
                if (PyErr_Occurred())
                    goto error;
                goto fallback;
            }
            bound += PyBytes_GET_SIZE(prefix) + hb + 1 + (h > 0); /* [','] prefix value '}' */
            int rc = used == NULL && (used = PyList_New(0)) == NULL ? -1 : PyList_Append(used, prefix);
            if (owned)
                Py_DECREF(prefix);
            if (rc < 0)
                goto error;
        }
    }

    /* Pass 2: write. */
    PyObject *out = PyBytes_FromStringAndSize(NULL, bound);
    if (out == NULL)
        goto error;
    char *start = PyBytes_AS_STRING(out), *o = start;
    Py_ssize_t next_prefix = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *r = items[i];
        int ok = 1;
        long long position = int_field(PyTuple_GET_ITEM(r, F_POSITION), &ok);
        long long offset = int_field(PyTuple_GET_ITEM(r, F_OFFSET), &ok);
        long long timestamp = int_field(PyTuple_GET_ITEM(r, F_TIMESTAMP), &ok);
        long long sequence = int_field(PyTuple_GET_ITEM(r, F_SEQUENCE), &ok);
        o = PUT_LITERAL(o, R_HEAD);
        o = put(o, path_text, (size_t)path_len);
        o = PUT_LITERAL(o, R_POSITION);
        o = put_int(o, position);
        o = PUT_LITERAL(o, R_OFFSET);
        o = put_int(o, offset);
        o = PUT_LITERAL(o, R_TIMESTAMP);
        o = put_int(o, timestamp);
        o = PUT_LITERAL(o, R_SEQUENCE);
        o = put_int(o, sequence);
        o = PUT_LITERAL(o, R_KEY);
        o = put_payload(o, PyTuple_GET_ITEM(r, F_KEY), mode);
        o = PUT_LITERAL(o, R_VALUE);
        o = put_payload(o, PyTuple_GET_ITEM(r, F_VALUE), mode);
        o = PUT_LITERAL(o, R_HEADERS);
        PyObject *headers = PyTuple_GET_ITEM(r, F_HEADERS);
        Py_ssize_t nh = PyTuple_GET_SIZE(headers);
        for (Py_ssize_t h = 0; h < nh; h++) {
            PyObject *prefix = PyList_GET_ITEM(used, next_prefix++);
            if (h)
                *o++ = ',';
            o = put(o, PyBytes_AS_STRING(prefix), (size_t)PyBytes_GET_SIZE(prefix));
            o = put_payload(o, PyTuple_GET_ITEM(PyTuple_GET_ITEM(headers, h), 1), mode);
            *o++ = '}';
        }
        o = PUT_LITERAL(o, R_TAIL);
    }
    Py_XDECREF(used);
    /* the size was exact: the allocator gets back a block of the size it gave, so the next batch's
     * block of a similar size comes from the same memory (bench/README.md) */
    if (o - start != bound) { /* cannot happen: pass 1 measures what pass 2 writes */
        Py_DECREF(out);
        PyErr_SetString(PyExc_SystemError, "_crender: record lines measured wrong");
        return NULL;
    }
    return out;
fallback:
    Py_XDECREF(used);
    Py_RETURN_NONE;
error:
    Py_XDECREF(used);
    return NULL;
}

static const char B_HEAD[] = "{\"type\":\"batch\",\"path\":";
/* the JSON text between the fields of a batch line, in order */
static const char *const B_KEYS[] = {
    ",\"position\":", ",\"size\":", ",\"magic\":", ",\"base_offset\":", ",\"last_offset\":", ",\"count\":",
    ",\"partition_leader_epoch\":", ",\"crc\":", ",\"crc_valid\":", ",\"compression\":",
    ",\"timestamp_type\":\"", "\",\"max_timestamp\":", ",\"producer_id\":", ",\"producer_epoch\":",
    ",\"base_sequence\":", ",\"is_transactional\":", ",\"is_control\":", ",\"delete_horizon_ms\":",
    ",\"after_break\":", "}\n",
};

/* RecordBatch fields (kreplica.formats.log.batch.RecordBatch). */
enum {
    B_PATH, B_POSITION, B_SIZE, B_MAGIC, B_BASE_OFFSET, B_LAST_OFFSET, B_COUNT_, B_EPOCH, B_CRC, B_CRC_VALID,
    B_ATTRIBUTES, B_COMPRESSION, B_TIMESTAMP_TYPE, B_BASE_TIMESTAMP, B_MAX_TIMESTAMP, B_PRODUCER_ID,
    B_PRODUCER_EPOCH, B_BASE_SEQUENCE, B_IS_TRANSACTIONAL, B_IS_CONTROL, B_DELETE_HORIZON, B_AFTER_BREAK,
    B_FIELDS
};

/* true/false/null for exactly True, False or None (null only where allowed); NULL otherwise. */
static const char *literal(PyObject *v, int null_ok) {
    if (v == Py_True)
        return "true";
    if (v == Py_False)
        return "false";
    if (v == Py_None && null_ok)
        return "null";
    return NULL;
}

static PyObject *render_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "render_batch(batch, path_json, codec_json, timestamp_types)");
        return NULL;
    }
    PyObject *b = args[0], *path = args[1], *codecs = args[2], *ts_names = args[3];
    if (!PyBytes_Check(path) || !PyTuple_Check(codecs) || !PyTuple_Check(ts_names) || PyTuple_GET_SIZE(ts_names) != 3) {
        PyErr_SetString(PyExc_TypeError, "path_json must be bytes, codec_json a tuple, timestamp_types a 3-tuple");
        return NULL;
    }
    if (!PyTuple_Check(b) || PyTuple_GET_SIZE(b) != B_FIELDS)
        Py_RETURN_NONE;
    int ok = 1;
    long long v[B_FIELDS];
    static const int ints[] = {B_POSITION, B_SIZE, B_MAGIC, B_BASE_OFFSET, B_LAST_OFFSET, B_EPOCH, B_CRC,
                               B_COMPRESSION, B_TIMESTAMP_TYPE, B_MAX_TIMESTAMP, B_PRODUCER_ID, B_PRODUCER_EPOCH,
                               B_BASE_SEQUENCE};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        v[ints[i]] = int_field(PyTuple_GET_ITEM(b, ints[i]), &ok);
    PyObject *count = PyTuple_GET_ITEM(b, B_COUNT_), *horizon = PyTuple_GET_ITEM(b, B_DELETE_HORIZON);
    if (count != Py_None)
        v[B_COUNT_] = int_field(count, &ok);
    if (horizon != Py_None)
        v[B_DELETE_HORIZON] = int_field(horizon, &ok);
    const char *crc_valid = literal(PyTuple_GET_ITEM(b, B_CRC_VALID), 1);
    const char *transactional = literal(PyTuple_GET_ITEM(b, B_IS_TRANSACTIONAL), 0);
    const char *control = literal(PyTuple_GET_ITEM(b, B_IS_CONTROL), 0);
    const char *after_break = literal(PyTuple_GET_ITEM(b, B_AFTER_BREAK), 0);
    if (!ok || !crc_valid || !transactional || !control || !after_break)
        Py_RETURN_NONE;
    PyObject *codec = NULL;
    if (v[B_COMPRESSION] >= 0 && v[B_COMPRESSION] < PyTuple_GET_SIZE(codecs)) {
        codec = PyTuple_GET_ITEM(codecs, v[B_COMPRESSION]);
        if (!PyBytes_Check(codec))
            Py_RETURN_NONE;
    }
    long long ts = v[B_TIMESTAMP_TYPE];
    PyObject *ts_name = PyTuple_GET_ITEM(ts_names, ts >= -1 && ts <= 1 ? ts + 1 : 1);
    if (!PyBytes_Check(ts_name))
        Py_RETURN_NONE;

    Py_ssize_t bound = (Py_ssize_t)sizeof(B_HEAD) + PyBytes_GET_SIZE(path) + PyBytes_GET_SIZE(ts_name) +
                       (codec ? PyBytes_GET_SIZE(codec) : INT_CHARS) + 16 * INT_CHARS + 4 * 5;
    for (size_t i = 0; i < sizeof(B_KEYS) / sizeof(B_KEYS[0]); i++)
        bound += (Py_ssize_t)strlen(B_KEYS[i]);
    char buf[1024];
    char *start = buf;
    PyObject *big = NULL;
    if (bound > (Py_ssize_t)sizeof(buf)) { /* a very long path */
        big = PyBytes_FromStringAndSize(NULL, bound);
        if (big == NULL)
            return NULL;
        start = PyBytes_AS_STRING(big);
    }
    char *o = start;
    const char *const *k = B_KEYS;
    o = PUT_LITERAL(o, B_HEAD);
    o = put(o, PyBytes_AS_STRING(path), (size_t)PyBytes_GET_SIZE(path));
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_POSITION]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_SIZE]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_MAGIC]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_BASE_OFFSET]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_LAST_OFFSET]);
    o = put(o, *k, strlen(*k)), k++;
    o = count == Py_None ? PUT_LITERAL(o, "null") : put_int(o, v[B_COUNT_]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_EPOCH]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_CRC]);
    o = put(o, *k, strlen(*k)), k++, o = put(o, crc_valid, strlen(crc_valid));
    o = put(o, *k, strlen(*k)), k++;
    o = codec ? put(o, PyBytes_AS_STRING(codec), (size_t)PyBytes_GET_SIZE(codec)) : put_int(o, v[B_COMPRESSION]);
    o = put(o, *k, strlen(*k)), k++, o = put(o, PyBytes_AS_STRING(ts_name), (size_t)PyBytes_GET_SIZE(ts_name));
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_MAX_TIMESTAMP]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_PRODUCER_ID]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_PRODUCER_EPOCH]);
    o = put(o, *k, strlen(*k)), k++, o = put_int(o, v[B_BASE_SEQUENCE]);
    o = put(o, *k, strlen(*k)), k++, o = put(o, transactional, strlen(transactional));
    o = put(o, *k, strlen(*k)), k++, o = put(o, control, strlen(control));
    o = put(o, *k, strlen(*k)), k++;
    o = horizon == Py_None ? PUT_LITERAL(o, "null") : put_int(o, v[B_DELETE_HORIZON]);
    o = put(o, *k, strlen(*k)), k++, o = put(o, after_break, strlen(after_break));
    o = put(o, *k, strlen(*k));
    if (big == NULL)
        return PyBytes_FromStringAndSize(buf, o - start);
    if (_PyBytes_Resize(&big, o - start) < 0)
        return NULL;
    return big;
}

static PyObject *base64(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "base64(data: bytes)");
        return NULL;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (n + 2) / 3 * 4);
    if (out == NULL)
        return NULL;
    put_base64(PyBytes_AS_STRING(out), (const unsigned char *)PyBytes_AS_STRING(args[0]), n);
    return out;
}

static PyObject *set_simd(PyObject *self, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    int was = use_avx2;
#ifdef HAVE_AVX2_PATH
    use_avx2 = on && __builtin_cpu_supports("avx2");
#else
    use_avx2 = 0;
#endif
    return PyBool_FromLong(was);
}

static PyMethodDef methods[] = {
    {"base64", (PyCFunction)(void (*)(void))base64, METH_FASTCALL,
     "base64(data) -> bytes: standard padded base64, as the record lines write it (for tests)."},
    {"set_simd", set_simd, METH_O,
     "set_simd(on) -> bool: use AVX2 for base64 when the CPU has it (the default) or not; returns the "
     "previous setting (for tests: both paths must write the same)."},
    {"render_records", (PyCFunction)(void (*)(void))render_records, METH_FASTCALL,
     "render_records(records, path_json, payload, header_prefixes, header_prefix) -> bytes | None: the ndjson "
     "lines of a run of data records, or None (nothing written) for anything the Python renderer must write."},
    {"render_batch", (PyCFunction)(void (*)(void))render_batch, METH_FASTCALL,
     "render_batch(batch, path_json, codec_json, timestamp_types) -> bytes | None: the ndjson line of a batch, "
     "or None for anything the Python renderer must write."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_crender", NULL, -1, methods};

PyMODINIT_FUNC PyInit__crender(void) {
    init_tables();
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "API_VERSION", API_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "PAYLOAD_NONE", PAYLOAD_NONE) < 0 ||
        PyModule_AddIntConstant(m, "PAYLOAD_BASE64", PAYLOAD_BASE64) < 0 ||
        PyModule_AddIntConstant(m, "PAYLOAD_HEX", PAYLOAD_HEX) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
