/*
 * Compiled twin of kreplica.formats.default_records.decode_records, for the common case only.
 *
 * decode(data, count, base_offset, base_timestamp, base_sequence, log_append_time,
 *        batch_position, record_cls, header_cls) -> list of records, or None.
 *
 * It decodes a well-formed records section of a non-control v2 batch exactly as the pure-Python
 * reader does (offsets, timestamps, sequences with Kafka's wrap rule, keys, values, headers with
 * keys decoded as UTF-8 with replacement). At the first irregularity of any kind -- a field past
 * the end, a negative or oversized length, a varint longer than Kafka allows, bytes left over,
 * an overflow -- it returns None and the caller re-decodes the section with the pure-Python
 * reader, which is the reference and raises Kafka's exact errors. So this file decides nothing
 * Kafka-specific on its own; tests/formats/test_crecords.py checks both agree.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define INT32_MAX_ ((int64_t)2147483647)

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
    return -1; /* too long: let the reference reader say how Kafka fails */
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

static PyObject *new_record(PyTypeObject *cls, PyObject **items, Py_ssize_t n) {
    PyObject *t = cls->tp_alloc(cls, n);
    if (t == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, items[i]); /* steals */
    return t;
}

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long count, base_offset, base_timestamp, batch_position;
    int base_sequence;
    PyObject *log_append_time, *record_cls, *header_cls;
    if (!PyArg_ParseTuple(args, "y*LLLiOLOO", &view, &count, &base_offset, &base_timestamp, &base_sequence,
                          &log_append_time, &batch_position, &record_cls, &header_cls))
        return NULL;
    if (!PyType_Check(record_cls) || !PyType_Check(header_cls) || count < 0) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    int have_lat = log_append_time != Py_None;
    long long lat = 0;
    if (have_lat) {
        lat = PyLong_AsLongLong(log_append_time);
        if (lat == -1 && PyErr_Occurred()) {
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    const unsigned char *p = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len, pos = 0;
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    PyObject *position = PyLong_FromLongLong(batch_position);
    if (position == NULL)
        goto error;
    for (long long index = 0; index < count; index++) {
        int32_t length, offset_delta, n;
        int64_t ts_delta;
        if (read_varint32(p, end, &pos, &length) < 0 || length < 0 || length > end - pos)
            goto fallback;
        Py_ssize_t start = pos;
        pos += 1; /* attributes */
        if (pos > end || read_varlong(p, end, &pos, &ts_delta) < 0 || read_varint32(p, end, &pos, &offset_delta) < 0)
            goto fallback;
        PyObject *key = NULL, *value = NULL, *headers = NULL;
        if (read_varint32(p, end, &pos, &n) < 0)
            goto fallback;
        if (n >= 0) {
            if (n > end - pos)
                goto fallback;
            key = PyBytes_FromStringAndSize((const char *)p + pos, n);
            pos += n;
        } else {
            key = Py_NewRef(Py_None);
        }
        if (key == NULL)
            goto error;
        if (read_varint32(p, end, &pos, &n) < 0 || n > end - pos) {
            Py_DECREF(key);
            goto fallback;
        }
        if (n >= 0) {
            value = PyBytes_FromStringAndSize((const char *)p + pos, n);
            pos += n;
        } else {
            value = Py_NewRef(Py_None);
        }
        if (value == NULL) {
            Py_DECREF(key);
            goto error;
        }
        int32_t header_count;
        if (read_varint32(p, end, &pos, &header_count) < 0 || header_count < 0 || header_count > end - pos) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto fallback;
        }
        headers = PyTuple_New(header_count);
        if (headers == NULL) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto error;
        }
        int bad = 0;
        for (int32_t h = 0; h < header_count; h++) {
            int32_t klen, vlen;
            if (read_varint32(p, end, &pos, &klen) < 0 || klen < 0 || klen > end - pos) {
                bad = 1;
                break;
            }
            PyObject *hkey = PyUnicode_DecodeUTF8((const char *)p + pos, klen, "replace");
            pos += klen;
            if (hkey == NULL) {
                bad = 2;
                break;
            }
            if (read_varint32(p, end, &pos, &vlen) < 0 || vlen > end - pos) {
                Py_DECREF(hkey);
                bad = 1;
                break;
            }
            PyObject *hvalue;
            if (vlen >= 0) {
                hvalue = PyBytes_FromStringAndSize((const char *)p + pos, vlen);
                pos += vlen;
            } else {
                hvalue = Py_NewRef(Py_None);
            }
            if (hvalue == NULL) {
                Py_DECREF(hkey);
                bad = 2;
                break;
            }
            PyObject *items[2] = {hkey, hvalue};
            PyObject *header = new_record((PyTypeObject *)header_cls, items, 2);
            if (header == NULL) {
                bad = 2;
                break;
            }
            PyTuple_SET_ITEM(headers, h, header);
        }
        if (bad || pos - start != length || (index == count - 1 && pos != end)) {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            if (bad == 2)
                goto error;
            goto fallback;
        }
        long long timestamp;
        if (have_lat) {
            timestamp = lat;
        } else if (__builtin_add_overflow((long long)base_timestamp, (long long)ts_delta, &timestamp)) {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            goto fallback;
        }
        long long offset;
        if (__builtin_add_overflow((long long)base_offset, (long long)offset_delta, &offset)) {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            goto fallback;
        }
        long long sequence;
        if (base_sequence < 0) {
            sequence = -1;
        } else if (offset_delta >= 0 && (int64_t)offset_delta <= INT32_MAX_ - base_sequence) {
            sequence = (long long)base_sequence + offset_delta;
        } else {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            goto fallback; /* the wrap rule stays in Python */
        }
        PyObject *items[9] = {Py_NewRef(position), PyLong_FromLongLong(offset), PyLong_FromLongLong(timestamp),
                              PyLong_FromLongLong(sequence), key, value, headers, Py_NewRef(Py_None),
                              Py_NewRef(Py_None)};
        if (items[1] == NULL || items[2] == NULL || items[3] == NULL) {
            for (int i = 0; i < 9; i++)
                Py_XDECREF(items[i]);
            goto error;
        }
        PyObject *record = new_record((PyTypeObject *)record_cls, items, 9);
        if (record == NULL)
            goto error;
        int rc = PyList_Append(out, record);
        Py_DECREF(record);
        if (rc < 0)
            goto error;
    }
    if (count == 0 && end != 0) {
        /* Kafka's iterator never reads: nothing to check */
    }
    Py_DECREF(position);
    PyBuffer_Release(&view);
    return out;
fallback:
    Py_XDECREF(position);
    Py_DECREF(out);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
error:
    Py_XDECREF(position);
    Py_DECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, "Decode a well-formed v2 records section, or return None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_crecords", NULL, -1, methods};

PyMODINIT_FUNC PyInit__crecords(void) { return PyModule_Create(&module); }
