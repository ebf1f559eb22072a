/*
 * The compiled path of kreplica.formats.log.default_records.iter_records, for well-formed records only.
 *
 * decode(data, pos, index, count, base_offset, base_timestamp, base_sequence, log_append_time,
 *        batch_position, record_cls, header_cls) -> (records, pos, irregular)
 *
 * Decodes the records section of a non-control v2 batch from byte `pos`, record number `index`
 * (of `count`), in bounded chunks: it stops after CHUNK_RECORDS records or once CHUNK_BYTES bytes
 * have been read, whichever comes first, so the caller streams and never holds a list of all the
 * records of a batch. It returns the records decoded, the position after the last one, and
 * whether it stopped at an irregular record.
 *
 * It decodes exactly as the pure-Python reader does (offsets, timestamps, sequences, keys,
 * values, headers with keys decoded as UTF-8 with replacement). At the first irregularity of any
 * kind -- a field past the end, a negative or oversized length, a varint longer than Kafka allows,
 * bytes left over after the last record, an overflow, a sequence that wraps -- it stops *before*
 * that record and says so; the caller then goes on from there with the pure-Python reader, which
 * is the reference and raises Kafka's exact errors. So this file decides nothing Kafka-specific
 * on its own; tests/formats/log/test_default_records.py runs on both paths and
 * tests/formats/log/test_crecords.py checks that they agree on random and damaged sections.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Bumped whenever decode()'s signature or contract changes; default_records checks it, so a
 * stale build is not used (and KREPLICA_REQUIRE_COMPILED=1 makes the tests say so). */
#define API_VERSION 2
#define CHUNK_RECORDS 512
#define CHUNK_BYTES (256 * 1024)
#define INT32_MAX_ ((int64_t)2147483647)

/* Kafka's ByteUtils: base 128, low group first; at most max_bytes bytes. -1 on anything else. */
static int read_uvarint(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, int max_bytes, uint64_t *out) {
    uint64_t value = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*pos >= end)
            return -1;
        unsigned char b = p[(*pos)++];
        if (!(b & 0x80)) {
            *out = value | ((uint64_t)b << shift);
            return 0;
        }
        value |= (uint64_t)(b & 0x7F) << shift;
        shift += 7;
    }
    return -1; /* too long: the reference reader says how Kafka fails */
}

static int read_varint32(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, int32_t *out) {
    uint64_t u;
    if (read_uvarint(p, end, pos, 5, &u) < 0)
        return -1;
    uint32_t v = (uint32_t)(u & 0xFFFFFFFFu);
    *out = (int32_t)((v >> 1) ^ (uint32_t)(-(int32_t)(v & 1)));
    return 0;
}

static int read_varlong(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, int64_t *out) {
    uint64_t u;
    if (read_uvarint(p, end, pos, 10, &u) < 0)
        return -1;
    *out = (int64_t)((u >> 1) ^ (uint64_t)(-(int64_t)(u & 1)));
    return 0;
}

/* A tuple subclass instance (Record, Header) from items it takes ownership of. */
static PyObject *new_tuple(PyTypeObject *cls, PyObject **items, Py_ssize_t n) {
    PyObject *t = cls->tp_alloc(cls, n);
    if (t == NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            Py_XDECREF(items[i]);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, items[i]); /* steals */
    return t;
}

/* The headers of one record, or NULL with *irregular set (no exception) or an exception set. */
static PyObject *read_headers(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, int32_t n,
                              PyTypeObject *header_cls, int *irregular) {
    PyObject *headers = PyTuple_New(n);
    if (headers == NULL)
        return NULL;
    for (int32_t h = 0; h < n; h++) {
        int32_t klen, vlen;
        if (read_varint32(p, end, pos, &klen) < 0 || klen < 0 || klen > end - *pos)
            goto irregular;
        PyObject *hkey = PyUnicode_DecodeUTF8((const char *)p + *pos, klen, "replace");
        if (hkey == NULL)
            goto error;
        *pos += klen;
        if (read_varint32(p, end, pos, &vlen) < 0 || vlen > end - *pos) {
            Py_DECREF(hkey);
            goto irregular;
        }
        PyObject *hvalue;
        if (vlen >= 0) {
            hvalue = PyBytes_FromStringAndSize((const char *)p + *pos, vlen);
            if (hvalue == NULL) {
                Py_DECREF(hkey);
                goto error;
            }
            *pos += vlen;
        } else {
            hvalue = Py_NewRef(Py_None);
        }
        PyObject *items[2] = {hkey, hvalue};
        PyObject *header = new_tuple(header_cls, items, 2);
        if (header == NULL)
            goto error;
        PyTuple_SET_ITEM(headers, h, header);
    }
    return headers;
irregular:
    *irregular = 1;
error:
    Py_DECREF(headers);
    return NULL;
}

/* A record's fields, located in the records section. */
typedef struct {
    Py_ssize_t key_at, value_at, headers_at;
    int32_t key_len, value_len, header_count, offset_delta;
    long long offset, timestamp;
} framed_record;

/* Frame the record at *pos: 0 with *pos just past it, or -1 when anything about it is irregular
 * (*pos then undefined). Headers are checked, not built. The checks are the reference reader's,
 * conservatively: a record framed here is one it reads, with these offset and timestamp. */
static int frame_record(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, int last, long long base_offset,
                        long long base_timestamp, int have_lat, long long lat, framed_record *r) {
    int32_t length;
    int64_t ts_delta;
    if (read_varint32(p, end, pos, &length) < 0 || length < 0 || length > end - *pos)
        return -1;
    Py_ssize_t start = *pos;
    *pos += 1; /* attributes */
    if (*pos > end || read_varlong(p, end, pos, &ts_delta) < 0 || read_varint32(p, end, pos, &r->offset_delta) < 0)
        return -1;
    if (read_varint32(p, end, pos, &r->key_len) < 0 || r->key_len > end - *pos)
        return -1;
    r->key_at = *pos;
    if (r->key_len > 0)
        *pos += r->key_len;
    if (read_varint32(p, end, pos, &r->value_len) < 0 || r->value_len > end - *pos)
        return -1;
    r->value_at = *pos;
    if (r->value_len > 0)
        *pos += r->value_len;
    if (read_varint32(p, end, pos, &r->header_count) < 0 || r->header_count < 0 || r->header_count > end - *pos)
        return -1;
    r->headers_at = *pos;
    for (int32_t h = 0; h < r->header_count; h++) {
        int32_t klen, vlen;
        if (read_varint32(p, end, pos, &klen) < 0 || klen < 0 || klen > end - *pos)
            return -1;
        *pos += klen;
        if (read_varint32(p, end, pos, &vlen) < 0 || vlen > end - *pos)
            return -1;
        if (vlen > 0)
            *pos += vlen;
    }
    if (*pos - start != length || (last && *pos != end))
        return -1;
    if (have_lat)
        r->timestamp = lat;
    else if (__builtin_add_overflow(base_timestamp, (long long)ts_delta, &r->timestamp))
        return -1;
    if (__builtin_add_overflow(base_offset, (long long)r->offset_delta, &r->offset))
        return -1;
    return 0;
}

/* The checks both entry points make on their arguments: the start within the section, and the
 * LogAppendTime timestamp (None: CreateTime). -1 with an exception set. */
static int start_section(Py_ssize_t pos, Py_ssize_t end, long long index, PyObject *log_append_time, int *have_lat,
                         long long *lat) {
    if (pos < 0 || pos > end || index < 0) {
        PyErr_SetString(PyExc_ValueError, "pos or index out of range");
        return -1;
    }
    *have_lat = log_append_time != Py_None;
    *lat = 0;
    if (*have_lat) {
        *lat = PyLong_AsLongLong(log_append_time);
        if (*lat == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos;
    long long index, count, base_offset, base_timestamp, batch_position;
    int base_sequence;
    PyObject *log_append_time, *record_cls, *header_cls;
    if (!PyArg_ParseTuple(args, "y*nLLLLiOLOO", &view, &pos, &index, &count, &base_offset, &base_timestamp,
                          &base_sequence, &log_append_time, &batch_position, &record_cls, &header_cls))
        return NULL;
    PyObject *out = NULL, *position = NULL;
    int irregular = 0;
    if (!PyType_Check(record_cls) || !PyType_Check(header_cls)) {
        PyErr_SetString(PyExc_TypeError, "record_cls and header_cls must be types");
        goto error;
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len;
    int have_lat;
    long long lat;
    if (start_section(pos, end, index, log_append_time, &have_lat, &lat) < 0)
        goto error;
    out = PyList_New(0);
    position = PyLong_FromLongLong(batch_position);
    if (out == NULL || position == NULL)
        goto error;
    Py_ssize_t chunk_start = pos;
    long long stop = count - index > CHUNK_RECORDS ? index + CHUNK_RECORDS : count;
    for (; index < stop && pos - chunk_start < CHUNK_BYTES; index++) {
        Py_ssize_t record_start = pos;
        framed_record r;
        PyObject *key = NULL, *value = NULL, *headers = NULL;
        long long sequence;
        if (frame_record(p, end, &pos, index == count - 1, base_offset, base_timestamp, have_lat, lat, &r) < 0)
            goto irregular;
        if (base_sequence < 0) {
            sequence = -1;
        } else if (r.offset_delta >= 0 && (int64_t)r.offset_delta <= INT32_MAX_ - base_sequence) {
            sequence = (long long)base_sequence + r.offset_delta;
        } else {
            goto irregular; /* the wrap rule stays in Python */
        }
        key = r.key_len >= 0 ? PyBytes_FromStringAndSize((const char *)p + r.key_at, r.key_len) : Py_NewRef(Py_None);
        value = r.value_len >= 0 ? PyBytes_FromStringAndSize((const char *)p + r.value_at, r.value_len)
                                 : Py_NewRef(Py_None);
        if (key == NULL || value == NULL)
            goto error_record;
        Py_ssize_t hpos = r.headers_at;
        headers = read_headers(p, end, &hpos, r.header_count, (PyTypeObject *)header_cls, &irregular);
        if (headers == NULL) {
            if (irregular)
                goto irregular_record;
            goto error_record;
        }
        {
            PyObject *items[9] = {Py_NewRef(position), PyLong_FromLongLong(r.offset), PyLong_FromLongLong(r.timestamp),
                                  PyLong_FromLongLong(sequence), key, value, headers, Py_NewRef(Py_None),
                                  Py_NewRef(Py_None)};
            key = value = headers = NULL;
            if (items[1] == NULL || items[2] == NULL || items[3] == NULL) {
                for (int i = 0; i < 9; i++)
                    Py_XDECREF(items[i]);
                goto error;
            }
            PyObject *record = new_tuple((PyTypeObject *)record_cls, items, 9);
            if (record == NULL)
                goto error;
            int rc = PyList_Append(out, record);
            Py_DECREF(record);
            if (rc < 0)
                goto error;
        }
        continue;
    irregular_record:
        Py_XDECREF(key);
        Py_XDECREF(value);
        Py_XDECREF(headers);
    irregular:
        irregular = 1;
        pos = record_start;
        break;
    error_record:
        Py_XDECREF(key);
        Py_XDECREF(value);
        Py_XDECREF(headers);
        goto error;
    }
    Py_DECREF(position);
    PyBuffer_Release(&view);
    return Py_BuildValue("(NnO)", out, pos, irregular ? Py_True : Py_False);
error:
    Py_XDECREF(position);
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}


/* ---- fold: the last record of each key ------------------------------------------------------
 *
 * KeyTable(): a table of key bytes -> (offset, timestamp, value, value_offset, path, batch_position)
 * held in C memory (one slot per distinct key, the key and value bytes copied into it), with the
 * mapping operations kreplica.formats.log.key_fold uses (get, [], []=, items, len); a dict is its
 * pure-Python twin.
 *
 * fold(data, pos, index, count, base_offset, base_timestamp, log_append_time, stop_offset,
 *      stop_time, batch_position, path, layouts, table) -> (pos, index, status, other)
 *
 * The compiled path of kreplica.formats.log.key_fold.fold_records (the pure-Python twin is the
 * reference; its docstring holds the contract). It walks the records section of an uncompressed
 * (or inflated) non-control v2 batch from record `index` at byte `pos` and folds each record whose
 * key and value match the flat layouts given for the key's leading int16 type into `table` (a
 * KeyTable). It returns at the first record it does not fold:
 *   status 0 FOLD_DONE     every record of the batch was folded;
 *   status 1 FOLD_FRAMING  the record at (pos, index) is irregular as a record (the pure reader
 *                          says why, or reads it when it only looked unusual here);
 *   status 2 FOLD_CUT      the record at (pos, index) lies beyond stop_offset or stop_time;
 *   status 3 FOLD_OTHER    a well-framed record that does not match a layout: `other` is its
 *                          (offset, timestamp, key, value) and (pos, index) are just past it.
 *
 * Layout codes (kreplica.formats.generated_messages.flat_layout): b h i q fixed-width integers, u a uuid,
 * s a non-null int16-length string, S a non-null compact string, T a tagged-fields section.
 * Varints longer than 4 bytes make a record FOLD_OTHER: the generic reader judges them.
 */
#define FOLD_API_VERSION 1
#define FOLD_DONE 0
#define FOLD_FRAMING 1
#define FOLD_CUT 2
#define FOLD_OTHER 3
#define MAX_LAYOUT_TYPES 64

/* One key's entry. The key bytes follow it in the same allocation, then room for a value of up
 * to INLINE_VALUE bytes (a longer one is allocated apart). */
typedef struct {
    int64_t offset, timestamp, value_offset, batch_position;
    char *value;
    Py_ssize_t value_len;   /* -1: null (a tombstone) */
    Py_ssize_t value_cap;
    PyObject *path;         /* a strong reference, or NULL before the first store */
    Py_ssize_t key_len;
    char key[];
} slot;

#define INLINE_VALUE 40
#define INLINE_AREA(s) ((s)->key + (s)->key_len)

/* The open-addressing index: 16 bytes a bucket, so a probe reads few cache lines. */
typedef struct {
    uint64_t hash;
    slot *entry;            /* NULL: an empty bucket */
} bucket;

typedef struct {
    PyObject_HEAD
    bucket *buckets;
    Py_ssize_t capacity;    /* a power of two */
    Py_ssize_t used;
} KeyTable;

static PyTypeObject KeyTableType;

/* A key in two parts (the fold rewrites a key's leading type without copying it): head, then rest. */
typedef struct {
    const char *head;
    Py_ssize_t head_len;
    const char *rest;
    Py_ssize_t rest_len;
} key_parts;

static key_parts whole_key(const char *key, Py_ssize_t n) {
    key_parts k = {key, n < 2 ? n : 2, key + (n < 2 ? n : 2), n < 2 ? 0 : n - 2};
    return k;
}

/* A 64-bit hash of a key: its head (at most 2 bytes, every key split the same way) and then its
 * rest 8 bytes at a time, each word multiplied in, then MurmurHash3's finaliser (the table indexes
 * by the low bits). */
static uint64_t key_hash(key_parts k) {
    const uint64_t m = 0x9E3779B97F4A7C15ULL;
    uint64_t h = 0x243F6A8885A308D3ULL ^ (uint64_t)k.head_len;
    for (Py_ssize_t i = 0; i < k.head_len; i++)
        h = (h << 8) | (unsigned char)k.head[i];
    h *= m;
    Py_ssize_t i = 0;
    for (; i + 8 <= k.rest_len; i += 8) {
        uint64_t w;
        memcpy(&w, k.rest + i, 8);
        h = (h ^ w) * m;
        h ^= h >> 29;
    }
    uint64_t tail = (uint64_t)(k.rest_len - i) << 56;
    for (int shift = 0; i < k.rest_len; i++, shift += 8)
        tail |= (uint64_t)(unsigned char)k.rest[i] << shift;
    h = (h ^ tail) * m;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static int same_key(const slot *s, key_parts k) {
    return s->key_len == k.head_len + k.rest_len && memcmp(s->key, k.head, k.head_len) == 0 &&
           memcmp(s->key + k.head_len, k.rest, k.rest_len) == 0;
}

static bucket *table_find(KeyTable *t, key_parts k, uint64_t hash) {
    Py_ssize_t mask = t->capacity - 1;
    for (Py_ssize_t i = (Py_ssize_t)(hash & (uint64_t)mask);; i = (i + 1) & mask) {
        bucket *b = &t->buckets[i];
        if (b->entry == NULL || (b->hash == hash && same_key(b->entry, k)))
            return b;
    }
}

/* A hint: the bucket a key's hash names (the fold asks for it records ahead of using it). */
static void table_prefetch(const KeyTable *t, uint64_t hash) {
    if (t->capacity)
        __builtin_prefetch(&t->buckets[hash & (uint64_t)(t->capacity - 1)]);
}

static int table_grow(KeyTable *t) {
    Py_ssize_t capacity = t->capacity ? t->capacity * 2 : 1024;
    bucket *buckets = PyMem_Calloc(capacity, sizeof(bucket));
    if (buckets == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    bucket *old = t->buckets;
    Py_ssize_t old_capacity = t->capacity;
    t->buckets = buckets;
    t->capacity = capacity;
    for (Py_ssize_t i = 0; i < old_capacity; i++) {
        if (old[i].entry != NULL)
            *table_find(t, whole_key(old[i].entry->key, old[i].entry->key_len), old[i].hash) = old[i];
    }
    PyMem_Free(old);
    return 0;
}

/* The entry of a key, made (the key copied, no value yet) when absent and `create`; NULL when
 * absent, or with an exception set. */
static slot *table_slot(KeyTable *t, key_parts k, uint64_t hash, int create) {
    if (t->capacity == 0) {
        if (!create)
            return NULL;
        if (table_grow(t) < 0)
            return NULL;
    }
    bucket *b = table_find(t, k, hash);
    if (b->entry != NULL || !create)
        return b->entry;
    if ((t->used + 1) * 3 > t->capacity * 2) {
        if (table_grow(t) < 0)
            return NULL;
        b = table_find(t, k, hash);
    }
    Py_ssize_t key_len = k.head_len + k.rest_len;
    slot *s = PyMem_Malloc(sizeof(slot) + (size_t)key_len + INLINE_VALUE);
    if (s == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(s->key, k.head, k.head_len);
    memcpy(s->key + k.head_len, k.rest, k.rest_len);
    s->key_len = key_len;
    s->value = INLINE_AREA(s);
    s->value_len = -1;
    s->value_cap = INLINE_VALUE;
    s->path = NULL;
    s->value_offset = -1;
    b->hash = hash;
    b->entry = s;
    t->used++;
    return s;
}

static void slot_free(slot *s) {
    if (s->value != INLINE_AREA(s))
        PyMem_Free(s->value);
    Py_XDECREF(s->path);
    PyMem_Free(s);
}

/* Store one entry in `s`; value == NULL: a tombstone. 0, or -1 with an exception set. */
static int slot_store(slot *s, int64_t offset, int64_t timestamp, const char *value, Py_ssize_t value_len,
                      int64_t value_offset, PyObject *path, int64_t batch_position) {
    if (value != NULL) {
        if (value_len > s->value_cap) {
            char *grown = PyMem_Malloc(value_len);
            if (grown == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            if (s->value != INLINE_AREA(s))
                PyMem_Free(s->value);
            s->value = grown;
            s->value_cap = value_len;
        }
        memcpy(s->value, value, value_len);
        s->value_len = value_len;
    } else {
        s->value_len = -1;
    }
    s->offset = offset;
    s->timestamp = timestamp;
    s->value_offset = value_offset;
    s->batch_position = batch_position;
    if (s->path != path) {
        Py_XDECREF(s->path);
        s->path = Py_NewRef(path);
    }
    return 0;
}

static PyObject *slot_entry(const slot *s) {
    PyObject *value = s->value_len < 0 ? Py_NewRef(Py_None) : PyBytes_FromStringAndSize(s->value, s->value_len);
    if (value == NULL)
        return NULL;
    return Py_BuildValue("(LLNLOL)", (long long)s->offset, (long long)s->timestamp, value,
                         (long long)s->value_offset, s->path ? s->path : Py_None, (long long)s->batch_position);
}

static PyObject *KeyTable_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    KeyTable *t = (KeyTable *)type->tp_alloc(type, 0);
    if (t != NULL) {
        t->buckets = NULL;
        t->capacity = 0;
        t->used = 0;
    }
    return (PyObject *)t;
}

static void KeyTable_dealloc(KeyTable *t) {
    for (Py_ssize_t i = 0; i < t->capacity; i++) {
        if (t->buckets[i].entry != NULL)
            slot_free(t->buckets[i].entry);
    }
    PyMem_Free(t->buckets);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static Py_ssize_t KeyTable_len(KeyTable *t) {
    return t->used;
}

static PyObject *KeyTable_get(KeyTable *t, PyObject *args) {
    Py_buffer key;
    PyObject *fallback = Py_None;
    if (!PyArg_ParseTuple(args, "y*|O", &key, &fallback))
        return NULL;
    key_parts k = whole_key(key.buf, key.len);
    slot *s = table_slot(t, k, key_hash(k), 0);
    PyBuffer_Release(&key);
    if (s == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(fallback);
    return slot_entry(s);
}

static PyObject *KeyTable_subscript(KeyTable *t, PyObject *key) {
    if (!PyBytes_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "KeyTable keys are bytes");
        return NULL;
    }
    key_parts k = whole_key(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
    slot *s = table_slot(t, k, key_hash(k), 0);
    if (s == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return slot_entry(s);
}

static int KeyTable_ass_subscript(KeyTable *t, PyObject *key, PyObject *entry) {
    long long offset, timestamp, value_offset, batch_position;
    PyObject *value, *path;
    if (!PyBytes_Check(key) || entry == NULL) {
        PyErr_SetString(PyExc_TypeError, "KeyTable keys are bytes, and entries are not deleted");
        return -1;
    }
    if (!PyArg_ParseTuple(entry, "LLOLOL", &offset, &timestamp, &value, &value_offset, &path, &batch_position))
        return -1;
    if (value != Py_None && !PyBytes_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "an entry's value is bytes or None");
        return -1;
    }
    key_parts k = whole_key(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
    slot *s = table_slot(t, k, key_hash(k), 1);
    if (s == NULL)
        return -1;
    return slot_store(s, offset, timestamp, value == Py_None ? NULL : PyBytes_AS_STRING(value),
                      value == Py_None ? -1 : PyBytes_GET_SIZE(value), value_offset, path, batch_position);
}

static PyObject *KeyTable_items(KeyTable *t, PyObject *unused) {
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < t->capacity; i++) {
        const slot *s = t->buckets[i].entry;
        if (s == NULL)
            continue;
        PyObject *entry = slot_entry(s);
        PyObject *item = entry == NULL ? NULL : Py_BuildValue("(y#N)", s->key, s->key_len, entry);
        if (item == NULL || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(item);
    }
    return out;
}

static PyMethodDef KeyTable_methods[] = {
    {"get", (PyCFunction)KeyTable_get, METH_VARARGS, "get(key[, default]) -> entry or default"},
    {"items", (PyCFunction)KeyTable_items, METH_NOARGS, "items() -> [(key, entry)], in no particular order"},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods KeyTable_mapping = {
    (lenfunc)KeyTable_len, (binaryfunc)KeyTable_subscript, (objobjargproc)KeyTable_ass_subscript,
};

static PyTypeObject KeyTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kreplica.formats.log._crecords.KeyTable",
    .tp_basicsize = sizeof(KeyTable),
    .tp_dealloc = (destructor)KeyTable_dealloc,
    .tp_as_mapping = &KeyTable_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "key bytes -> (offset, timestamp, value, value_offset, path, batch_position), held in C memory",
    .tp_methods = KeyTable_methods,
    .tp_new = KeyTable_new,
};

typedef struct {
    int present;
    int alias;
    const char *key;
    Py_ssize_t key_len;
    PyObject *values; /* tuple of bytes or None, indexed by value version (borrowed) */
} type_layout;

/* An unsigned varint of at most 4 bytes (values below 2^28), else -1. */
static int small_uvarint(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, Py_ssize_t *out) {
    uint64_t u;
    Py_ssize_t start = *pos;
    if (read_uvarint(p, end, pos, 4, &u) < 0) {
        *pos = start;
        return -1;
    }
    *out = (Py_ssize_t)u;
    return 0;
}

/* Whether p[0:n] is exactly one message of this flat layout. */
static int matches_layout(const unsigned char *p, Py_ssize_t n, const char *layout, Py_ssize_t layout_len) {
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < layout_len; i++) {
        Py_ssize_t need;
        switch (layout[i]) {
        case 'b': need = 1; break;
        case 'h': need = 2; break;
        case 'i': need = 4; break;
        case 'q': need = 8; break;
        case 'u': need = 16; break;
        case 's': {
            if (n - pos < 2)
                return 0;
            int16_t len = (int16_t)((p[pos] << 8) | p[pos + 1]);
            pos += 2;
            if (len < 0)
                return 0;
            need = len;
            break;
        }
        case 'S': {
            Py_ssize_t u;
            if (small_uvarint(p, n, &pos, &u) < 0 || u == 0)
                return 0;
            need = u - 1;
            break;
        }
        case 'T': {
            Py_ssize_t tags, tag, size;
            if (small_uvarint(p, n, &pos, &tags) < 0)
                return 0;
            for (Py_ssize_t k = 0; k < tags; k++) {
                if (small_uvarint(p, n, &pos, &tag) < 0 || small_uvarint(p, n, &pos, &size) < 0 || size > n - pos)
                    return 0;
                pos += size;
            }
            need = 0;
            break;
        }
        default:
            return 0;
        }
        if (need > n - pos)
            return 0;
        pos += need;
    }
    return pos == n;
}

static int load_layouts(PyObject *layouts, type_layout *out, Py_ssize_t *n_types) {
    if (!PyTuple_Check(layouts)) {
        PyErr_SetString(PyExc_TypeError, "layouts must be a tuple");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(layouts);
    if (n > MAX_LAYOUT_TYPES)
        n = MAX_LAYOUT_TYPES;
    for (Py_ssize_t t = 0; t < n; t++) {
        PyObject *item = PyTuple_GET_ITEM(layouts, t);
        out[t].present = 0;
        if (item == Py_None)
            continue;
        PyObject *key;
        long alias;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3 ||
            ((alias = PyLong_AsLong(PyTuple_GET_ITEM(item, 0))) == -1 && PyErr_Occurred()) ||
            alias < 0 || alias > 0x7FFF ||
            !PyBytes_Check(key = PyTuple_GET_ITEM(item, 1)) || !PyTuple_Check(PyTuple_GET_ITEM(item, 2))) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a layout is (alias type, key layout, value layouts)");
            return -1;
        }
        out[t].present = 1;
        out[t].alias = (int)alias;
        out[t].key = PyBytes_AS_STRING(key);
        out[t].key_len = PyBytes_GET_SIZE(key);
        out[t].values = PyTuple_GET_ITEM(item, 2);
    }
    *n_types = n;
    return 0;
}

/* Whether a key and value (value == NULL: a tombstone) match the layouts; *alias gets the type
 * the key is stored under. */
static int fold_matches(const unsigned char *key, Py_ssize_t key_len, const unsigned char *value, Py_ssize_t value_len,
                        const type_layout *layouts, Py_ssize_t n_types, int *alias) {
    if (key_len < 2)
        return 0;
    int16_t type = (int16_t)((key[0] << 8) | key[1]);
    if (type < 0 || type >= n_types || !layouts[type].present)
        return 0;
    const type_layout *l = &layouts[type];
    if (!matches_layout(key + 2, key_len - 2, l->key, l->key_len))
        return 0;
    *alias = l->alias;
    if (value == NULL)
        return 1;
    if (value_len < 2)
        return 0;
    int16_t version = (int16_t)((value[0] << 8) | value[1]);
    if (version < 0 || version >= PyTuple_GET_SIZE(l->values))
        return 0;
    PyObject *vl = PyTuple_GET_ITEM(l->values, version);
    if (!PyBytes_Check(vl))
        return 0;
    return matches_layout(value + 2, value_len - 2, PyBytes_AS_STRING(vl), PyBytes_GET_SIZE(vl));
}

/* Records folded a chunk at a time: framed and hashed first, their buckets asked for, then their
 * entries, then stored; the memory behind a large table is waited for in parallel, not in turn. */
#define FOLD_CHUNK 32

typedef struct {
    framed_record r;
    char alias[2];
    key_parts key;
    uint64_t hash;
} chunk_record;

static PyObject *fold(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos;
    long long index, count, base_offset, base_timestamp, stop_offset, stop_time, batch_position;
    PyObject *log_append_time, *path, *layouts, *table_obj;
    if (!PyArg_ParseTuple(args, "y*nLLLLOLLLOOO", &view, &pos, &index, &count, &base_offset, &base_timestamp,
                          &log_append_time, &stop_offset, &stop_time, &batch_position, &path, &layouts, &table_obj))
        return NULL;
    PyObject *other = NULL;
    int status = FOLD_DONE;
    type_layout types[MAX_LAYOUT_TYPES];
    Py_ssize_t n_types = 0;
    chunk_record chunk[FOLD_CHUNK];
    if (!PyObject_TypeCheck(table_obj, &KeyTableType)) {
        PyErr_SetString(PyExc_TypeError, "table must be a KeyTable");
        goto error;
    }
    KeyTable *table = (KeyTable *)table_obj;
    if (load_layouts(layouts, types, &n_types) < 0)
        goto error;
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len;
    int have_lat;
    long long lat;
    if (start_section(pos, end, index, log_append_time, &have_lat, &lat) < 0)
        goto error;
    while (index < count && status == FOLD_DONE) {
        int n = 0;
        /* 1: frame and match records, hash their keys, ask for their buckets */
        while (n < FOLD_CHUNK && index + n < count) {
            Py_ssize_t record_start = pos;
            chunk_record *c = &chunk[n];
            framed_record *r = &c->r;
            int alias = 0;
            if (frame_record(p, end, &pos, index + n == count - 1, base_offset, base_timestamp, have_lat, lat, r) < 0) {
                status = FOLD_FRAMING;
                pos = record_start;
                break;
            }
            if (r->offset > stop_offset || r->timestamp > stop_time) {
                status = FOLD_CUT;
                pos = record_start;
                break;
            }
            if (r->key_len < 2 || !fold_matches(p + r->key_at, r->key_len, r->value_len < 0 ? NULL : p + r->value_at,
                                                r->value_len, types, n_types, &alias)) {
                PyObject *k = r->key_len < 0 ? Py_NewRef(Py_None)
                                             : PyBytes_FromStringAndSize((const char *)p + r->key_at, r->key_len);
                PyObject *v = r->value_len < 0 ? Py_NewRef(Py_None)
                                               : PyBytes_FromStringAndSize((const char *)p + r->value_at, r->value_len);
                if (k == NULL || v == NULL) {
                    Py_XDECREF(k);
                    Py_XDECREF(v);
                    goto error;
                }
                other = Py_BuildValue("(LLNN)", r->offset, r->timestamp, k, v);
                if (other == NULL)
                    goto error;
                status = FOLD_OTHER;
                break;
            }
            c->alias[0] = (char)((alias >> 8) & 0xFF);
            c->alias[1] = (char)(alias & 0xFF);
            c->key.head = c->alias;
            c->key.head_len = 2;
            c->key.rest = (const char *)p + r->key_at + 2;
            c->key.rest_len = r->key_len - 2;
            c->hash = key_hash(c->key);
            table_prefetch(table, c->hash);
            n++;
        }
        /* 2: ask for the entries the buckets hold (a hint: storing may move them) */
        if (table->capacity) {
            for (int i = 0; i < n; i++) {
                slot *e = table->buckets[chunk[i].hash & (uint64_t)(table->capacity - 1)].entry;
                if (e != NULL)
                    __builtin_prefetch(e);
            }
        }
        /* 3: store them, in order */
        for (int i = 0; i < n; i++) {
            chunk_record *c = &chunk[i];
            slot *s = table_slot(table, c->key, c->hash, 1);
            if (s == NULL)
                goto error;
            int64_t value_offset = c->r.value_len >= 0 ? c->r.offset : s->value_offset;
            if (slot_store(s, c->r.offset, c->r.timestamp,
                           c->r.value_len >= 0 ? (const char *)p + c->r.value_at : NULL, c->r.value_len,
                           value_offset, path, batch_position) < 0)
                goto error;
        }
        index += n;
        if (status == FOLD_OTHER)
            index++;    /* (pos is past it already) */
    }
    PyBuffer_Release(&view);
    if (other == NULL)
        other = Py_NewRef(Py_None);
    return Py_BuildValue("(nLiN)", pos, index, status, other);
error:
    Py_XDECREF(other);
    PyBuffer_Release(&view);
    return NULL;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(data, pos, index, count, base_offset, base_timestamp, base_sequence, log_append_time, "
     "batch_position, record_cls, header_cls) -> (records, pos, irregular): the next bounded chunk of "
     "well-formed records, stopping before the first irregular one."},
    {"fold", fold, METH_VARARGS,
     "fold(data, pos, index, count, base_offset, base_timestamp, log_append_time, stop_offset, stop_time, "
     "batch_position, path, layouts, table) -> (pos, index, status, other): the last record of each key "
     "matching the layouts, into table."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_crecords", NULL, -1, methods};

PyMODINIT_FUNC PyInit__crecords(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "API_VERSION", API_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "CHUNK_RECORDS", CHUNK_RECORDS) < 0 ||
        PyModule_AddIntConstant(m, "CHUNK_BYTES", CHUNK_BYTES) < 0 ||
        PyModule_AddIntConstant(m, "FOLD_API_VERSION", FOLD_API_VERSION) < 0 ||
        PyType_Ready(&KeyTableType) < 0 || PyModule_AddObjectRef(m, "KeyTable", (PyObject *)&KeyTableType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
