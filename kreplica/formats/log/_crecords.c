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
 * on its own; tests/formats/test_default_records.py runs on both paths and
 * tests/formats/test_crecords.py checks that they agree on random and damaged sections.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

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
    if (pos < 0 || pos > end || index < 0) {
        PyErr_SetString(PyExc_ValueError, "pos or index out of range");
        goto error;
    }
    int have_lat = log_append_time != Py_None;
    long long lat = 0;
    if (have_lat) {
        lat = PyLong_AsLongLong(log_append_time);
        if (lat == -1 && PyErr_Occurred())
            goto error;
    }
    out = PyList_New(0);
    position = PyLong_FromLongLong(batch_position);
    if (out == NULL || position == NULL)
        goto error;
    Py_ssize_t chunk_start = pos;
    long long stop = count - index > CHUNK_RECORDS ? index + CHUNK_RECORDS : count;
    for (; index < stop && pos - chunk_start < CHUNK_BYTES; index++) {
        Py_ssize_t record_start = pos;
        int32_t length, offset_delta, n, header_count;
        int64_t ts_delta;
        PyObject *key = NULL, *value = NULL, *headers = NULL;
        long long timestamp, offset, sequence;
        if (read_varint32(p, end, &pos, &length) < 0 || length < 0 || length > end - pos)
            goto irregular;
        Py_ssize_t start = pos;
        pos += 1; /* attributes */
        if (pos > end || read_varlong(p, end, &pos, &ts_delta) < 0 || read_varint32(p, end, &pos, &offset_delta) < 0)
            goto irregular;
        if (read_varint32(p, end, &pos, &n) < 0 || n > end - pos)
            goto irregular;
        if (n >= 0) {
            key = PyBytes_FromStringAndSize((const char *)p + pos, n);
            if (key == NULL)
                goto error;
            pos += n;
        } else {
            key = Py_NewRef(Py_None);
        }
        if (read_varint32(p, end, &pos, &n) < 0 || n > end - pos)
            goto irregular_record;
        if (n >= 0) {
            value = PyBytes_FromStringAndSize((const char *)p + pos, n);
            if (value == NULL)
                goto error_record;
            pos += n;
        } else {
            value = Py_NewRef(Py_None);
        }
        if (read_varint32(p, end, &pos, &header_count) < 0 || header_count < 0 || header_count > end - pos)
            goto irregular_record;
        headers = read_headers(p, end, &pos, header_count, (PyTypeObject *)header_cls, &irregular);
        if (headers == NULL) {
            if (irregular)
                goto irregular_record;
            goto error_record;
        }
        if (pos - start != length || (index == count - 1 && pos != end))
            goto irregular_record;
        if (have_lat) {
            timestamp = lat;
        } else if (__builtin_add_overflow(base_timestamp, (long long)ts_delta, &timestamp)) {
            goto irregular_record;
        }
        if (__builtin_add_overflow(base_offset, (long long)offset_delta, &offset))
            goto irregular_record;
        if (base_sequence < 0) {
            sequence = -1;
        } else if (offset_delta >= 0 && (int64_t)offset_delta <= INT32_MAX_ - base_sequence) {
            sequence = (long long)base_sequence + offset_delta;
        } else {
            goto irregular_record; /* the wrap rule stays in Python */
        }
        {
            PyObject *items[9] = {Py_NewRef(position), PyLong_FromLongLong(offset), PyLong_FromLongLong(timestamp),
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

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(data, pos, index, count, base_offset, base_timestamp, base_sequence, log_append_time, "
     "batch_position, record_cls, header_cls) -> (records, pos, irregular): the next bounded chunk of "
     "well-formed records, stopping before the first irregular one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_crecords", NULL, -1, methods};

PyMODINIT_FUNC PyInit__crecords(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "API_VERSION", API_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "CHUNK_RECORDS", CHUNK_RECORDS) < 0 ||
        PyModule_AddIntConstant(m, "CHUNK_BYTES", CHUNK_BYTES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
